//! `explain` on real messages copied from public issue threads (each case names its source),
//! asserting the category and the fact the explanation must state; including false friends (an
//! out-of-memory that is the job's own memory, not another process's).

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use gpudoctor::explain::explain_text;
use gpudoctor::matrix::Matrix;

struct Case {
    source: &'static str,
    text: &'static str,
    category: &'static str,
    /// Must appear in the first match's meaning, causes or fix.
    says: &'static str,
}

const fn c(
    source: &'static str,
    text: &'static str,
    category: &'static str,
    says: &'static str,
) -> Case {
    Case {
        source,
        text,
        category,
        says,
    }
}

const CASES: &[Case] = &[
    // Driver too old: the number is the driver's CUDA version.
    c("https://github.com/rikdz/GraphWriter/issues/6", "The NVIDIA driver on your system is too old (found version 6050).", "driver_too_old", "CUDA 6.5"),
    c("https://github.com/RangiLyu/nanodet/issues/216", "RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update you", "driver_too_old", "CUDA 10.1"),
    c("https://github.com/lllyasviel/Fooocus/issues/1313", "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx", "driver_too_old", "CUDA 11.4"),
    c("https://github.com/wuhuikai/FastFCN/issues/37", "AssertionError: \nThe NVIDIA driver on your system is too old (found version 9000).", "driver_too_old", "CUDA 9.0"),
    c("https://github.com/lllyasviel/Omost/issues/120", "RuntimeError: The NVIDIA driver on your system is too old (found version 11060).", "driver_too_old", "CUDA 11.6"),
    c("https://github.com/hhaAndroid/mmdetection-mini/issues/30", "AssertionError: The NVIDIA driver on your system is too old (found version 10000).", "driver_too_old", "CUDA 10.0"),
    c("https://github.com/IEIT-Yuan/Yuan-2.0/issues/65", "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11000). Please update your GPU driver", "driver_too_old", "CUDA 11.0"),
    c("https://github.com/lllyasviel/stable-diffusion-webui-forge/issues/2053", "RuntimeError: The NVIDIA driver on your system is too old (found version 11070).", "driver_too_old", "cu118"),
    // New GPU, old PyTorch build (and the reverse).
    c("https://github.com/RetroUpgrade-YouTube/Hi3DGen_1Click_installer/issues/5", "NVIDIA GeForce RTX 5080 Laptop GPU with CUDA capability sm_120 is not compatible with the current PyTorch installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.", "arch_unsupported", "Blackwell"),
    c("https://github.com/remsky/Kokoro-FastAPI/issues/306", "NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", "arch_unsupported", "+cu128"),
    c("https://github.com/IAHispano/Applio/issues/1006", "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.", "arch_unsupported", "2.7"),
    c("https://github.com/coendevente/SlicerNNInteractive/issues/58", "NVIDIA GeForce RTX 5070 Laptop GPU with CUDA capability sm_120 is not compatible with the current PyTorch installation. The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90 compute_37.", "arch_unsupported", "compute 12.0"),
    c("https://github.com/pytorch/pytorch/pull/45130", "GeForce RTX 3080 with CUDA capability sm_86 is not compatible with the current PyTorch installation.", "arch_unsupported", "Ampere"),
    c("https://github.com/lmoe/wyoming-xtts/issues/1", "NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.", "arch_unsupported", "whl/cu132"),
    // cuDNN loaded vs compiled, in both encodings.
    c("https://github.com/endernewton/tf-faster-rcnn/issues/436", "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7201 (compatibility version 7200) but source was compiled with 7004 (compatibility version 7000).", "cudnn_mismatch", "7.2.1"),
    c("https://github.com/balancap/SSD-Tensorflow/issues/340", "Loaded runtime CuDNN library: 7301 (compatibility version 7300) but source was compiled with 7003 (compatibility version 7000).", "cudnn_mismatch", "7.0.3"),
    c("https://github.com/tensorflow/tensorflow/issues/39842", "Loaded runtime CuDNN library: 7.5.0 but source was compiled with: 7.6.5. CuDNN library major and minor version needs to match or have higher minor version", "cudnn_mismatch", "equal or newer minor"),
    c("https://github.com/bmaltais/kohya_ss/issues/2787", "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Loaded runtime CuDNN library: 8.7.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version.", "cudnn_mismatch", "8.9.4"),
    c("https://github.com/carpedm20/DCGAN-tensorflow/issues/242", "E tensorflow/stream_executor/cuda/cuda_dnn.cc:352] Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5110 (compatibility version 5100).", "cudnn_mismatch", "5.1.10"),
    c("https://github.com/Kaggle/docker-python/issues/1435", "Loaded runtime CuDNN library: 9.0.0 but source was compiled with: 9.3.0.  CuDNN library needs to have matching major version and equal or higher minor version.", "cudnn_mismatch", "9.3.0"),
    c("https://github.com/googlecolab/colabtools/issues/2626", "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or higher minor version.", "cudnn_mismatch", "8.0.5"),
    c("https://github.com/tensorflow/tensorflow/issues/3922", "E tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 5103 (compatibility version 5100) but source was compiled with 4007 (compatibility version 4000).", "cudnn_mismatch", "different major"),
    // Windows crash codes in log lines.
    c("https://github.com/tensorflow/tensorflow/issues/53392", "At that point it exits with error code Process finished with exit code -1073740791 (0xC0000409).", "windows_crash_code", "fail-fast"),
    c("https://github.com/tensorflow/models/issues/7139", "got an error 'Process finished with exit code -1073740791 (0xC0000409)' running the 3_test.py.", "windows_crash_code", "STACK_BUFFER_OVERRUN"),
    c("https://github.com/zhixuhao/unet/issues/240", "Process finished with exit code -1073740791 (0xC0000409)", "windows_crash_code", "cuDNN"),
    c("https://github.com/tensorflow/models/issues/6256", "Train exit with No hint and when use Pycharm, the error is 'Process finished with exit code -1073741819 (0xC0000005)'", "windows_crash_code", "ACCESS_VIOLATION"),
    c("https://github.com/tensorflow/tensorflow/issues/47934", "Process finished with exit code -1073740791 (0xC0000409) when training on GPU", "windows_crash_code", "out of GPU memory"),
    // Missing libraries.
    c("https://github.com/BVLC/caffe/issues/5550", "error while loading shared libraries: libcudnn.so.5: cannot open shared object file: No such file or directory", "library_path_conflict", "libcudnn.so.5"),
    c("https://github.com/PaddlePaddle/Paddle/issues/11068", "Check failed: nullptr != *dso_handle Failed to find dynamic library: libcudnn.so (libcudnn.so: cannot open shared object file: No such file or directory)", "library_path_conflict", "cuDNN"),
    c("https://github.com/daswer123/xtts-finetune-webui/issues/31", "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory", "library_path_conflict", "libcudnn_ops_infer.so.8"),
    c("https://github.com/tensorflow/tensorflow/issues/45200", "W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory", "library_path_conflict", "libcudnn.so.8"),
    c("https://github.com/TinyLLaVA/TinyLLaVA_Factory/issues/134", "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory", "library_path_conflict", "libcuda.so"),
    c("https://github.com/OpenTalker/SadTalker/issues/323", "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory", "library_path_conflict", "libcuda.so.1"),
    c("https://github.com/ameli/manylinux-cuda/issues/5", "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.", "container_no_gpu", "host"),
    // Driver/library mismatch.
    c("https://github.com/Oneflow-Inc/oneflow/issues/3106", "Failed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch", "Reboot"),
    c("https://github.com/tinygrad/open-gpu-kernel-modules/issues/47", "nvidia-smi \nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124", "driver_library_mismatch", "NVML_ERROR_LIB_RM_VERSION_MISMATCH"),
    c("https://github.com/mozilla/translations/issues/1167", "[train] nvidia-smi failed with return code 18", "driver_library_mismatch", "Driver/library version mismatch"),
    c("https://github.com/lyulyul/shine-cluster/issues/30", "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch", "kernel module"),
    c("https://github.com/intel/llvm/issues/17614", "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.144", "driver_library_mismatch", "18"),
    // PyTorch out of memory: whose memory is it?
    c("https://github.com/Synthintel0/MyGirlGPT/issues/11", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacty of 4.00 GiB of which 41.56 MiB is free. Including non-PyTorch memory, this process has 3.44 GiB memory in use. Of the allocated memory 2.58 GiB is allocated by PyTorch, and 1.90 MiB is reserved by PyTorch but unallocated.", "gpu_memory_exhausted", "This process itself holds"),
    c("https://github.com/FoundationVision/GenerateU/issues/10", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 496.00 MiB. GPU 0 has a total capacty of 14.75 GiB of which 235.06 MiB is free. Process 20398 has 14.52 GiB memory in use. Of the allocated memory 14.06 GiB is allocated by PyTorch, and 330.42 MiB is reserved by PyTorch but unallocated.", "gpu_memory_exhausted", "it is this training process itself"),
    c("https://github.com/carolchenyx/MGFN./issues/35", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacty of 6.00 GiB of which 0 bytes is free. Of the allocated memory 2.93 GiB is allocated by PyTorch, and 2.30 GiB is reserved by PyTorch but unallocated.", "gpu_memory_exhausted", "expandable_segments"),
    c("https://github.com/levihsu/OOTDiffusion/issues/167", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of 4.00 GiB of which 2.80 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.", "gpu_memory_exhausted", "More memory is free than was asked for"),
    c("https://github.com/kerrj/lerf/issues/73", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacty of 23.65 GiB of which 1.66 GiB is free. Including non-PyTorch memory, this process has 20.81 GiB memory in use. Of the allocated memory 12.09 GiB is allocated by PyTorch, and 4.84 GiB is reserved by PyTorch but unallocated.", "gpu_memory_exhausted", "This process itself holds 20.81 GiB"),
    c("https://github.com/YingqianWang/iPASSR/issues/9", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 10.73 GiB (GPU 0; 8.00 GiB total capacity; 17.20 GiB already allocated; 0 bytes free; 19.15 GiB reserved in total by PyTorch)", "gpu_memory_exhausted", "larger than the whole GPU"),
    c("https://github.com/wxian3/NeuroLens/issues/2", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 55.57 GiB. GPU 0 has a total capacty of 12.00 GiB of which 9.02 GiB is free.", "gpu_memory_exhausted", "larger than the whole GPU (12.00 GiB)"),
    c("https://github.com/antgroup/echomimic_v2/issues/115", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.22 GiB. GPU 0 has a total capacity of 15.69 GiB of which 3.71 GiB is free. Including non-PyTorch memory, this process has 11.14 GiB memory in use.", "gpu_memory_exhausted", "no other process is to blame"),
    c("https://github.com/pytorch/pytorch/issues/59778", "CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated; 3.03 GiB free; 1.24 GiB reserved in total by PyTorch)", "gpu_memory_exhausted", "More memory is free than was asked for"),
    c("https://github.com/JDAI-CV/centerX/issues/51", "CUDA out of memory. Tried to allocate 130.00 MiB (GPU 1; 7.80 GiB total capacity; 5.91 GiB already allocated; 33.56 MiB free; 6.09 GiB reserved in total by PyTorch)", "gpu_memory_exhausted", "already holds 5.91 GiB"),
    c("https://github.com/One-2-3-45/One-2-3-45/issues/25", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.69 GiB (GPU 0; 14.56 GiB total capacity; 649.97 MiB already allocated; 1.31 GiB free; 1.01 GiB reserved in total by PyTorch)", "gpu_memory_exhausted", "used outside this process's PyTorch allocator"),
    // cuBLAS.
    c("https://github.com/QwenLM/Qwen/issues/120", "CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", "gpu_memory_exhausted", "workspace"),
    c("https://github.com/OpenBMB/VisCPM/issues/3", "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", "gpu_memory_exhausted", "version mismatch"),
    c("https://github.com/tensorflow/tensorflow/issues/9489", "E tensorflow/stream_executor/cuda/cuda_blas.cc:366] failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED", "gpu_memory_exhausted", "cuBLAS"),
    // Fabric Manager (802).
    c("https://github.com/pytorch/pytorch/issues/35710", "RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50", "fabric_manager", "nvidia-fabricmanager"),
    c("https://github.com/wilicc/gpu-burn/issues/92", "what():  Error (gpu_burn-drv.cpp:298): system not yet initialized", "fabric_manager", "NVSwitch"),
    c("https://github.com/microsoft/lisa/issues/2823", "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized", "fabric_manager", "802"),
    c("https://github.com/ollama/ollama/issues/11963", "ggml_cuda_init: failed to initialize CUDA: system not yet initialized", "fabric_manager", "driver's exact version"),
    // NCCL.
    c("https://github.com/TheAtticusProject/cuad/issues/9", "what(): NCCL Error 1: unhandled cuda error", "application_error", "NCCL_DEBUG=INFO"),
    c("https://github.com/NVIDIA/nccl/issues/207", "NCCL error in: /torch/lib/c10d/ProcessGroupNCCL.cpp:260, unhandled system error", "configuration", "--ipc=host"),
    c("https://github.com/amdegroot/ssd.pytorch/issues/577", "RuntimeError: NCCL Error 2: unhandled system error", "configuration", "shared memory"),
    c("https://github.com/NVIDIA/nccl/issues/473", "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'", "configuration", "/dev/shm"),
    c("https://github.com/NVIDIA/nccl/issues/1410", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5", "application_error", "Xids"),
    // No kernel image.
    c("https://github.com/OpenBMB/cpm_kernels/issues/6", "CUDA Error: no kernel image is available for execution on the device", "arch_unsupported", "architecture"),
    c("https://github.com/rowanz/neural-motifs/issues/6", "cudaCheckError() failed : no kernel image is available for execution on the device", "arch_unsupported", "209"),
    c("https://github.com/sshaoshuai/PointRCNN/issues/128", "CUDA error: no kernel image is available for execution on the device", "arch_unsupported", "gpudoctor recommend"),
    c("https://github.com/CVCUDA/CV-CUDA/issues/14", "[ERROR]Line 679: '' failed: no kernel image is available for execution on the device Aborted (core dumped)", "arch_unsupported", "cubin or PTX"),
    // No driver. (The driver's own "probe routine was not called" / "No NVIDIA graphics adapter
    // probed" lines say the module is loaded and another driver holds the GPUs: configuration.)
    c("https://github.com/NVIDIA/nvidia-docker/issues/988", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.", "driver_missing", "NVML_ERROR_DRIVER_NOT_LOADED"),
    c("https://github.com/qixuema/envs/issues/4", "NVIDIA-SMI has failed because it couldn‘t communicate with the NVIDIA driver.", "driver_missing", "DKMS"),
    c("https://github.com/mattshma/bigdata/issues/133", "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).", "configuration", "nouveau"),
    c("https://github.com/mattshma/bigdata/issues/133", "[188497.595099] NVRM: No NVIDIA graphics adapter probed!", "configuration", "lspci"),
    // Issue 30, OOM depth: every process the text names, and figures in the units printed.
    c("https://github.com/awslabs/keys_values/issues/92", "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 572.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 321.31 MiB is free. Process 3721648 has 414.00 MiB memory in use. Including non-PyTorch memory, this process has 37.46 GiB memory in use. Process 1374765 has 414.00 MiB memory in use. Process 1374763 has 414.00 MiB memory in use. Process 1374764 has 414.00 MiB memory in use. Of the allocated memory 36.04 GiB is allocated by PyTorch, and 321.37 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.", "gpu_memory_exhausted", "PID 1374765 (414.00 MiB)"),
    c("https://github.com/awslabs/keys_values/issues/92", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 572.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 321.31 MiB is free. Process 3721648 has 414.00 MiB memory in use. Including non-PyTorch memory, this process has 37.46 GiB memory in use. Process 1374765 has 414.00 MiB memory in use. Process 1374763 has 414.00 MiB memory in use. Process 1374764 has 414.00 MiB memory in use. Of the allocated memory 36.04 GiB is allocated by PyTorch, and 321.37 MiB is reserved by PyTorch but unallocated.", "gpu_memory_exhausted", "This process itself holds 37.46 GiB"),
    c("https://github.com/pytorch/pytorch/issues/40863", "RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 11.17 GiB total capacity; 505.96 MiB already allocated; 12.50 MiB free; 530.00 MiB reserved in total by PyTorch)", "gpu_memory_exhausted", "with 12.50 MiB free"),
    c("https://github.com/pytorch/pytorch/pull/99699", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 138.00 MiB.\nGPU 0 has a total capacty of 15.90 GiB of which 8.44 MiB is free.\nProcess 1246069 has 577.00 MiB memory in use. Including non-PyTorch memory,\nthis process has 15.32 GiB memory in use. Of the allocated memory\n14.12 GiB is allocated by PyTorch, and 410.41 MiB is reserved\nby PyTorch but unallocated.", "gpu_memory_exhausted", "PID 1246069 (577.00 MiB)"),
    c("https://github.com/patrickbryant1/AFProfile/issues/8", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.", "gpu_memory_exhausted", "4770354232 bytes (4.44 GiB)"),
    c("https://github.com/cupy/cupy/issues/2537", "Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).", "gpu_memory_exhausted", "3,635,267,072 bytes (3.39 GiB) were allocated so far"),
    // Issue 30, evidence: prose that quotes no message.
    c("https://github.com/open-mmlab/mmdetection/issues/1207", "Every time i run the train.py, my computer restarts, either for Train with a single GPU or Train with multiple GPUs, while test.py is fine.", "thermal_power", "over-current protection"),
    c("https://github.com/Comfy-Org/ComfyUI/issues/3430", "Hi, when I try to process a video > 100Mb\nMy process hits the limit of RAM and got killed", "host_memory_exhausted", "OOM killer"),
];

fn says(m: &gpudoctor::explain::Match, what: &str) -> bool {
    m.meaning.contains(what)
        || m.likely_causes.iter().any(|c| c.contains(what))
        || m.fix.text.contains(what)
        || m.fix.commands.iter().any(|c| c.contains(what))
        || m.name.contains(what)
        || m.code.to_string().contains(what)
}

#[test]
fn real_messages_are_explained() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let m = Matrix::embedded().unwrap();
    let mut failures = Vec::new();
    for case in CASES {
        let v = explain_text(case.text, &m);
        let Some(first) = v.first() else {
            failures.push(format!("{}: nothing matched {:?}", case.source, case.text));
            continue;
        };
        if first.category.as_str() != case.category {
            failures.push(format!(
                "{}: category {} (expected {}) for {:?}",
                case.source,
                first.category.as_str(),
                case.category,
                first.name
            ));
        } else if !says(first, case.says) {
            failures.push(format!(
                "{}: does not say {:?}: {:#?}",
                case.source, case.says, first
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
