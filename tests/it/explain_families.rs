//! The message families mined from the emitters (`knowledge/messages/`, issue 30) recognised in
//! real texts copied from public threads (each case names its thread), with the cause they
//! must come back with; wrapped texts; rewording; and the generators' staleness checks.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Run;
use gpudoctor::explain::explain_text;
use gpudoctor::matrix::Matrix;

struct Case {
    source: &'static str,
    text: &'static str,
    category: &'static str,
    /// The signature that must come first.
    signature: &'static str,
}

const fn c(
    source: &'static str,
    text: &'static str,
    category: &'static str,
    signature: &'static str,
) -> Case {
    Case {
        source,
        text,
        category,
        signature,
    }
}

const CASES: &[Case] = &[
    // XLA's BFC allocator (xla/tsl/framework/bfc_allocator.cc), in both capitalisations.
    c("https://github.com/jax-ml/jax/issues/13428", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes.", "gpu_memory_exhausted", "jax-oom"),
    c("https://github.com/jax-ml/jax/issues/4994", "FAILED tests/core_test.py::CoreTest::test_jit_42 - RuntimeError: Resource exhausted: Out of memory while trying to allocate 24 bytes.", "gpu_memory_exhausted", "jax-oom"),
    // TensorFlow's conv kernels.
    c("https://github.com/irdanish11/AnomalyEventDetection/issues/1", "UnknownError: 2 root error(s) found.\n  (0) Unknown: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.\n\t [[{{node conv3d/Conv3D}}]]", "gpu_memory_exhausted", "tf-cudnn-init"),
    c("https://github.com/mozilla/DeepSpeech/issues/2211", "tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. \nThis is probably because cuDNN failed to initialize, so try looking to see if a warning log \nmessage was printed above.\n\t [[{{node tower_0/conv1d/Conv2D}}]]", "gpu_memory_exhausted", "tf-cudnn-init"),
    // cuDNN 8 on Windows (the string is in cudnn_ops_infer64_8.dll of nvidia-cudnn-cu11 8.9.5.29):
    // zlib's DLL, which cuDNN does not ship, is not on the search path (a library path problem).
    c("https://github.com/AlexeyAB/darknet/issues/8551", "Could not locate zlibwapi.dll. Please make sure it is in your library path!\n\nCUDA-version: 11070 (11070), cuDNN: 8.4.1, GPU count: 1", "library_path_conflict", "cudnn-zlibwapi"),
    c("https://github.com/PaddlePaddle/PaddleOCR/issues/8400", "ppocr WARNING: When args.layout is false, args.ocr is automatically set to false\nCould not locate zlibwapi.dll. Please make sure it is in your library path!", "library_path_conflict", "cudnn-zlibwapi"),
    // Python's Windows loader, the older and the newer form.
    c("https://github.com/tensorflow/tensorflow/issues/39071", "  File \"C:\\Users\\dell\\anaconda3\\lib\\imp.py\", line 342, in load_dynamic\n    return _load(spec)\n\nImportError: DLL load failed: The specified module could not be found.", "library_path_conflict", "windows-dll-load"),
    c("https://github.com/rantonels/starless/issues/18", "from . import multiarray ImportError: DLL load failed while importing multiarray: The specified module could not be found.", "library_path_conflict", "windows-dll-load"),
    c("https://github.com/thu-ml/tianshou/issues/297", "OSError: [WinError 1455] The paging file is too small for this operation to complete\nError loading \"E:\\Anaconda\\envs\\Python37\\lib\\site-packages\\torch\\lib\\cudnn_cnn_train64_8.dll\" or one of its dependencies.", "host_memory_exhausted", "cpu-alloc"),
    // The display watchdog (cudaErrorLaunchTimeout's text in libcudart): a timeout setting, as
    // knowledge/code-categories.yaml maps the code.
    c("https://github.com/mrnabati/CenterFusion/issues/76", "RuntimeError: CUDA error: the launch timed out and was terminated\nCUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.", "configuration", "cuda-launch-timeout"),
    c("https://github.com/happynear/caffe-windows/issues/250", "Check failed: error == cudaSuccess (6 vs. 0)  the launch timed out and was terminated", "configuration", "cuda-launch-timeout"),
    // torch.load's map_location text (torch/serialization.py).
    c("https://github.com/kleinlee/DH_live/issues/22", "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.", "cpu_only_build", "torch-load-no-cuda"),
    c("https://github.com/yunjey/pytorch-tutorial/issues/249", "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_locatio\nn=torch.device('cpu') to map your storages to the CPU.", "cpu_only_build", "torch-load-no-cuda"),
    // The device-side assert as CUDA prints it (a backtick before the closing quote).
    c("https://github.com/Deci-AI/super-gradients/issues/1307", "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [68,0,0], thread: [64,0,0] Assertion `index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"` failed.", "application_error", "device-assert"),
    c("https://github.com/kousw/stable-diffusion-webui-daam/issues/4", "C:\\actions-runner\\_work\\pytorch\\pytorch\\builder\\windows\\pytorch\\aten\\src\\ATen\\native\\cuda\\IndexKernel.cu:91: block: [26,0,0], thread: [32,0,0] Assertion `index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"` failed.", "application_error", "device-assert"),
    // NVML's NVML_ERROR_NO_PERMISSION, from nvidia-smi and from nvidia-container-cli.
    c("https://github.com/NVIDIA/nvidia-container-toolkit/issues/210", "podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L\nFailed to initialize NVML: Insufficient Permissions", "configuration", "nvml-no-permission"),
    c("https://github.com/NVIDIA/nvidia-docker/issues/676", "Then `nvidia-smi`  I get the following error\n`Failed to initialize NVML: Insufficient Permissions`", "configuration", "nvml-no-permission"),
    // The scheduler's "Insufficient %v" for nvidia.com/gpu.
    c("https://github.com/NVIDIA/k8s-device-plugin/issues/165", "0/3 nodes are available: 3 insufficient nvidia.com/gpu.", "container_no_gpu", "k8s-insufficient-gpu"),
    // glibc's dl-version.c.
    c("https://github.com/pyg-team/pyg-lib/issues/548", "OSError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.33' not found (required by /home/ee615/anaconda3/envs/qcnet/lib/python3.10/site-packages/libpyg.so)", "library_path_conflict", "glibc-version"),
    // gpu-burn's "Couldn't init a GPU test: %s" (gpu_burn-drv.cpp): the test never started, whatever
    // inner error it names, and the summary it prints after is of no test.
    c("https://github.com/wilicc/gpu-burn/issues/123", "GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-e9f1360a-e941-dde5-d54a-9ba14c23644a)\nCouldn't init a GPU test: Error: CUDA_ERROR_UNKNOWN\n100.0%  proc'd: 0 (0 Gflop/s) - 0 (0 Gflop/s)   errors: 0 - 0   temps: 41 C - 40 C", "smoke_failure", "gpu-burn-init"),
    c("https://github.com/wilicc/gpu-burn/issues/52", "Couldn't init a GPU test: Error in \"load module\": \nInitialized device 0 with 11441 MB of memory (11332 MB available, using 10199 MB of it), using FLOATS\n50.0%  proc'd: -1 (0 Gflop/s) - 0 (0 Gflop/s)   errors: 1641686072  (DIED!)- 0   temps: 33 C - 29 C", "smoke_failure", "gpu-burn-init"),
    // CPython: importlib's "No module named %r", subprocess's "died with <Signals.SIGKILL: 9>".
    c("https://github.com/hlky/nataili/issues/88", "  File \"/opt/conda/lib/python3.9/site-packages/ts/metrics/system_metrics.py\", line 61, in gpu_utilization\n    import nvgpu\nModuleNotFoundError: No module named 'nvgpu'", "configuration", "python-module-missing"),
    c("https://github.com/Panchovix/stable-diffusion-webui-reForge/issues/241", "subprocess.CalledProcessError: Command '['/mnt/f/.../venv/bin/python', 'launch.py']' died with <Signals.SIGKILL: 9>.", "host_memory_exhausted", "host-oom"),
    // DCGM's health message (dcgm_errors.h, DCGM_FR_CLOCKS_EVENT_THERMAL).
    c("https://github.com/NVIDIA/DCGM/issues/270", "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks event due to thermal violation in GPU 2. Verify that the cooling on this machine is functional, including external, thermal material interface, fans, and any other components.", "thermal_power", "thermal"),
    // nvidia-docker 1.x's image check (src/nvidia-docker/utils.go).
    c("https://github.com/NVIDIA/nvidia-docker/issues/106", "root@belka2-500-311ng:/home/belka# sudo nvidia-docker run --rm nvidia/cuda nvidia-smi\nnvidia-docker | 2016/06/07 18:49:33 Error: unsupported CUDA version: driver 7.0 < image 7.5", "driver_too_old", "insufficient-driver"),    // Shells reporting a job killed by SIGKILL: bash (jobs.c, non-interactive), zsh (jobs.c with
    // signames2.awk's "killed"), fish (fish_job_summary.fish): the signal's category, SIGKILL's.
    c("https://github.com/divamgupta/deep-clustering-kingdra/issues/2", "2020-11-24 20:22:28.106 /bin/bash: line 27: 318 Killed sh start.sh", "host_memory_exhausted", "host-killed-line"),
    c("https://github.com/easydiffusion/easydiffusion/issues/102", "./scripts/on_sd_start.sh: line 118: 7080 killed", "host_memory_exhausted", "host-killed-line"),
    c("https://github.com/OedoSoldier/chatglm_webui/issues/3", "Loading checkpoint shards:  88%|███████████████▊  | 7/8 [00:12<00:01,  1.84s/it][1]    14875 killed     python main.py --low_vram", "host_memory_exhausted", "host-killed-line"),
    c("https://github.com/bes-dev/stable_diffusion.openvino/issues/8", "fish: Job 1, 'python3 stable_diffusion.py --p…' terminated by signal SIGKILL (Forced quit)", "host_memory_exhausted", "host-killed-line"),
    // earlyoom (main.c, kill.c).
    c("https://github.com/Comfy-Org/ComfyUI/issues/15276", "Aug 04 10:39:10 debian earlyoom[845]: low memory! at or below SIGTERM limits: mem  3.00%, swap 10.00%\nAug 04 10:39:10 debian earlyoom[845]: sending SIGTERM to process 322603 uid 1000 \"python3.13\": oom_score 1282, VmRSS 29931 MiB, cmdline \"/home/x/miniconda3/envs/comfy-env/bin/python3.13 main.py\"", "host_memory_exhausted", "oom-daemon"),
    // systemd-oomd (oomd-manager.c) and pid 1 on the unit (core/cgroup.c).
    c("https://github.com/systemd/systemd/issues/23606", "Dec 18 19:34:56 user-desktop systemd-oomd[840]: Killed /user.slice/user-1001.slice/user@1001.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-dbb4a75e-031f-480d-924b-5de5af7579d2.scope due to memory pressure for /user.slice/user-1001.slice/user@1001.service being 51.07% > 50.00% for > 20s with reclaim activity\nDec 18 19:34:56 user-desktop systemd[1837]: vte-spawn-dbb4a75e-031f-480d-924b-5de5af7579d2.scope: systemd-oomd killed 12 process(es) in this unit.", "host_memory_exhausted", "oom-daemon"),
    c("https://github.com/bennettoxford/openprescribing/issues/5431", "2026-02-08T00:40:07.136852+00:00 largeweb2 systemd[1]: user.slice: A process of this unit has been killed by the OOM killer.", "host_memory_exhausted", "host-oom"),
    // vLLM's platform detection (vllm/config/device.py; older releases print the head alone).
    c("https://github.com/ai-dynamo/dynamo/issues/391", "    raise RuntimeError(\"Failed to infer device type\")\nRuntimeError: Failed to infer device type", "container_no_gpu", "vllm-no-device"),
    // torch.utils.cpp_extension's minor-version warning: a warning, not the failure.
    c("https://github.com/open-mmlab/mmcv/issues/2949", "/miniconda3/envs/test-env/lib/python3.10/site-packages/torch/utils/cpp_extension.py:388: UserWarning: The detected CUDA version (11.5) has a minor version mismatch with the version that was used to compile PyTorch (11.7). Most likely this shouldn't be a problem.", "cuda_runtime_mismatch", "torch-ext-cuda-minor"),
    // bash's own translation of "Killed" (po/zh_CN.po), on a short paste.
    c("https://github.com/danijar/dreamerv3/issues/203", "Writing metrics: /home/bzs/logdir/dreamer/20251205T175323/metrics.jsonl\nWriting metrics: /home/bzs/logdir/dreamer/20251205T175323/scores.jsonl\n已杀死", "host_memory_exhausted", "host-killed-line"),
    // torch.utils.cpp_extension, wrapped as the message is.
    c("https://github.com/rusty1s/pytorch_sparse/issues/189", "RuntimeError:\n    The detected CUDA version (11.2) mismatches the version that was used to compile\n    PyTorch (10.2). Please make sure to use the same CUDA versions.", "cuda_runtime_mismatch", "torch-ext-cuda-mismatch"),
    c("https://github.com/sp-uhh/storm/issues/14", "raise EnvironmentError('CUDA_HOME environment variable is not set. '\nOSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", "configuration", "torch-ext-cuda-home"),
    // vLLM's platform check and its KV cache check.
    c("https://github.com/sasha0552/pascal-pkgs-ci/issues/21", "ERROR 04-29 21:35:55 [engine.py:448] Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla P40 GPU has compute capability 6.1. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.", "arch_unsupported", "vllm-bf16"),
    c("https://github.com/vllm-project/vllm/issues/10439", "vllm-1  | ERROR 11-18 18:07:28 engine.py:366]     raise ValueError(\"No available memory for the cache blocks. \"\nvllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", "gpu_memory_exhausted", "vllm-kv-cache"),
    // QEMU's VFIO (hw/vfio/common.c).
    c("https://github.com/64kramsystem/vga-passthrough/issues/15", "vfio error: 0000:01:00.0: group 1 is not viable", "configuration", "vfio-group"),
    // nvidia-docker 1.x (src/nvidia/nvidia.go): the driver's module is missing, most often.
    c("https://github.com/PipelineAI/pipeline/issues/124", "nvidia-docker | 2016/09/25 22:24:24 Error: Could not load UVM kernel module", "driver_missing", "nvidia-docker-uvm"),
    // No nvidia-smi in the container.
    c("https://github.com/mmartial/ComfyUI-Nvidia-Docker/issues/57", "!! ERROR: nvidia-smi not found", "container_no_gpu", "smi-not-found"),
    // bash's own "%s: command not found" (execute_cmd.c), in a container run without the GPUs.
    c("https://github.com/NVIDIA/nvidia-docker/issues/341", "$ nvidia-smi\nbash: nvidia-smi: command not found", "container_no_gpu", "smi-not-found"),
    // --- Frameworks (famsfw): PyTorch's lazy CUDA init (torch/cuda/__init__.py) and numba's
    // driver (numba/cuda/cudadrv/driver.py): CUDA in a forked child.
    c("https://github.com/facebookresearch/pycls/issues/183", "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method\n\nhow to solve this problem?", "application_error", "cuda-fork"),
    c("https://github.com/flairNLP/flair/issues/1316", "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method", "application_error", "cuda-fork"),
    // PyTorch's cuDNN frontend (libtorch_cuda.so): no engine could run the computation.
    c("https://github.com/facebookresearch/dinov2/issues/158", "I got a runtime error \"RuntimeError: GET was unable to find an engine to execute this computation\" when running inference with DINOV2.", "cudnn_mismatch", "cudnn-no-engine"),
    c("https://github.com/facebookresearch/vggt/issues/183", "RuntimeError: FIND was unable to find an engine to execute this computation", "cudnn_mismatch", "cudnn-no-engine"),
    // TensorFlow's CUDA diagnostics (stream_executor/cuda/cuda_diagnostics.cc).
    c("https://github.com/tensorflow/tensorflow/issues/57764", "2022-09-20 14:11:47.727435: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: UNKNOWN ERROR (34)\n2022-09-20 14:11:47.727516: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:156] kernel driver does not appear to be running on this host (mv-inference-5f7d446b77-kmsxn)", "driver_missing", "driver-not-loaded"),
    // XLA's nvptx_compiler.cc: a warning whose wording changed ("the ptxas version", later "the
    // PTX compiler version").
    c("https://github.com/google/brax/issues/488", "W external/xla/xla/service/gpu/nvptx_compiler.cc:760] The NVIDIA driver's CUDA version is 12.4 which is older than the ptxas CUDA version (12.5.40). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.", "driver_too_old", "xla-ptxas-driver"),
    c("https://github.com/conda-forge/tensorflow-feedstock/issues/417", "`W external/local_xla/xla/service/gpu/nvptx_compiler.cc:930] The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version 12.5.82. Because the driver is older than the PTX compiler version, XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.`", "driver_too_old", "xla-ptxas-driver"),
    // tsl's cudart stub (in TensorFlow and in XLA's plugin): no libcuda.
    c("https://github.com/b-data/jupyterlab-python-docker-stack/issues/8", "2024-05-07 19:48:22.219200: I external/local_tsl/tsl/cuda/cudart_stub.cc:32] Could not find cuda drivers on your machine, GPU will not be used.", "driver_missing", "nvcuda-missing"),
    // XLA's cuDNN start-up (the cause is in the lines above it: a cuDNN older than the build's).
    c("https://github.com/jax-ml/jax/issues/16082", "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.", "cudnn_mismatch", "cudnn-status"),
    // XLA's PTX compilation (nvptx_compiler.cc, asm_compiler.cc): no ptxas to run.
    c("https://github.com/jax-ml/jax/issues/7239", "2021-07-10 19:06:52.914859: W external/org_tensorflow/tensorflow/stream_executor/gpu/asm_compiler.cc:77] Couldn't get ptxas version string: Internal: Couldn't invoke ptxas --version\n2021-07-10 19:06:52.915444: F external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:480] ptxas returned an error during compilation of ptx to sass: 'Internal: Failed to launch ptxas'  If the error message indicates that a file could not be written, please verify that sufficient filesystem space is provided.\nAborted (core dumped)", "cuda_runtime_mismatch", "xla-ptxas-missing"),
    c("https://github.com/jax-ml/jax/issues/6583", "2021-04-28 21:34:18.432071: W tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:70] Can't find ptxas binary in ${CUDA_DIR}/bin.  Will back to the GPU driver for PTX -> sass compilation.  This is OK so long as you don't see a warning below about an out-of-date driver version. Custom ptxas location can be specified using $PATH.", "cuda_runtime_mismatch", "xla-ptxas-missing"),
    // TensorFlow's CUDA diagnostics on a machine whose driver is not loaded (an early release).
    c("https://github.com/tensorflow/tensorflow/issues/255", "E tensorflow/stream_executor/cuda/cuda_driver.cc:466] failed call to cuInit: CUDA_ERROR_NO_DEVICE\nI tensorflow/stream_executor/cuda/cuda_diagnostics.cc:86] kernel driver does not appear to be running on this host (joao): /proc/driver/nvidia/version does not exist", "driver_missing", "driver-not-loaded"),
    // PyTorch's capability check before 2.15 (torch/cuda/__init__.py's incorrect_binary_warn, an
    // older wording of it).
    c("https://github.com/jd730/OICR-pytorch/issues/27", "Found GPU0 GeForce RTX 2080 Ti which requires CUDA_VERSION >= 9000 for optimal performance and fast startup time, but your PyTorch was compiled with CUDA_VERSION 8000.", "arch_unsupported", "sm-incompatible"),
    // --- System, install and containers (famssys): DKMS, nvidia-installer, the kernel module's
    // build checks, nvidia-smi, CDI, Windows' loader.
    // DKMS 2.x ended the sentence after "cannot be found." (dkms 3.0.10 names the two paths).
    c("https://github.com/M-Bab/linux-kernel-amdgpu-binaries/issues/6", "run-parts: executing /etc/kernel/header_postinst.d/dkms 4.11.1+ /boot/vmlinuz-4.11.1+\nError! Your kernel headers for kernel 4.11.1+ cannot be found.\nPlease install the linux-headers-4.11.1+ package,\nor use the --kernelsourcedir option to tell DKMS where it's located", "driver_missing", "kernel-headers-missing"),
    c("https://github.com/Mange/rtl8192eu-linux-driver/issues/114", "sudo dkms install 8192cu/1.11\n\nYour kernel headers for kernel 4.20.6-200.fc29.x86_64 cannot be found at\n/lib/modules/4.20.6-200.fc29.x86_64/build or /lib/modules/4.20.6-200.fc29.x86_64/source.", "driver_missing", "kernel-headers-missing"),
    // A stale DKMS entry stops `dkms status` (and the rebuild after a kernel update).
    c("https://github.com/Zibri/Realtek-rts5229-linux-driver/issues/17", "#dkms install -m rts5229 -v 1.07\nError! Could not locate dkms.conf file.\nFile: /var/lib/dkms/rts5229/1.07/source/dkms.conf does not exist.", "driver_missing", "dkms-conf-missing"),
    // nvidia-installer, wrapped at 80 columns in a journald log.
    c("https://github.com/kubernetes/kops/pull/4971", "Jul 23 11:03:09 ip-172-20-56-182 docker[1435]: ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most\nJul 23 11:03:09 ip-172-20-56-182 docker[1435]: frequently when this kernel module was built against the wrong or", "driver_missing", "installer-module-load"),
    // The older wording: "appears to already be loaded".
    c("https://github.com/ApolloAuto/apollo/issues/6308", "ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.  This may be because it is in use (for example, by an X server, a CUDA program, or the NVIDIA Persistence Daemon),", "configuration", "installer-driver-in-use"),
    c("https://github.com/mlc-ai/mlc-llm/issues/95", "ERROR: An NVIDIA kernel module 'nvidia-uvm' appears to already be loaded in your kernel. ", "configuration", "installer-driver-in-use"),
    // conftest.sh's compiler check as releases before 470 print it ("Bailing out!").
    c("https://github.com/GoogleCloudPlatform/compute-gpu-installation/issues/15", "**Failed CC version check. Bailing out!**\nsimple running of the script throws: ", "configuration", "kernel-cc-mismatch"),
    c("https://github.com/clearlinux/distribution/issues/1835", "Compiler version check failed:\n\nThe major and minor number of the compiler used to\ncompile the kernel:\n\ngcc version 9.", "configuration", "kernel-cc-mismatch"),
    // nvidia-smi's own texts.
    c("https://github.com/NVIDIA/nvidia-docker/issues/933", "After a reboot of the server, the nvidia-smi has stopped working with the following error: \n`\"No devices were found\"`", "driver_fault", "smi-no-devices"),
    c("https://github.com/warmshao/FasterLivePortrait/issues/8", "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\nPlease also try adding directory that contains libnvidia-ml.so to your system PATH.", "driver_missing", "smi-nvml-missing"),
    // CDI: the device the runtime asked for (here a UUID of the management spec) is in no spec.
    c("https://github.com/NVIDIA/nvidia-container-toolkit/issues/1239", "  Warning  Failed     10s (x2 over 10s)  kubelet            Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: unresolvable CDI devices management.nvidia.com/gpu=GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead", "container_no_gpu", "cdi-unresolvable"),
    c("https://github.com/warmshao/FasterLivePortrait/issues/116", "Emulate Docker CLI using podman. Create /etc/containers/nodocker to quiet msg.\nError: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", "container_no_gpu", "cdi-unresolvable"),
    // Windows' loader through Python's OSError: the code in brackets is the same in every language.
    c("https://github.com/bmaltais/kohya_ss/issues/486", r#"OSError: [WinError 127] La procédure spécifiée est introuvable. Error loading "E:\SSD\SuperSD2.0\kohya\kohya_ss\venv\lib\site-packages\torch\lib\cudnn_adv_infer64_8.dll" or one of its dependencies."#, "library_path_conflict", "windows-dll-procedure"),
    c("https://github.com/guoyww/AnimateDiff/issues/374", r#"OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\Users\Newton\Documents\aistuff\AnimateDiff\venv\Lib\site-packages\torch\lib\torch_python.dll" or one of its dependencies."#, "library_path_conflict", "windows-dll-procedure"),
    c("https://github.com/666ghj/BettaFish/issues/428", r#"OSError: [WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "C:\Program Files\Python311\Lib\site-packages\torch\lib\c10.dll" or one of its dependencies."#, "library_path_conflict", "windows-dll-init"),
    c("https://github.com/bitsandbytes-foundation/bitsandbytes/issues/320", "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed", "library_path_conflict", "windows-dll-init"),
    // NCCL's WARN lines about the machine's network and shared memory (NVIDIA/nccl 2.30.7, 2.18.1).
    c("https://github.com/EasonXiao-888/MambaTree/issues/14", "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1201, internal error, NCCL version 2.14.3\nncclInternalError: Internal check failed.\nLast error:\nBootstrap : no socket interface found", "configuration", "nccl-network"),
    c("https://github.com/NVIDIA/nccl/issues/1814", "hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221\nhostname-test:984:1357 [4] NCCL INFO transport/net.cc:1298 -> 6", "configuration", "nccl-ib-completion"),
    c("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html", "NCCL WARN Error: failed to extend /dev/shm/nccl-03v824 to 4194660 bytes", "configuration", "nccl-shm"),
    // --- Inference runtimes (famsinfer): Triton's OutOfResources (runtime/errors.py; releases of
    // 2024 said "Hardware limitation") and its ptxas failure (backends/nvidia/compiler.py).
    c("https://github.com/InternLM/lmdeploy/issues/2451", "triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 108672, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.", "application_error", "triton-out-of-resources"),
    c("https://github.com/alipay/PainlessInferenceAcceleration/issues/35", "When I run flood's `example/simple_example.py` I get the error: `triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 163842, Hardware limitation: 101376. reducing the block size or `num_stages` may help`.", "application_error", "triton-out-of-resources"),
    c("https://github.com/triton-lang/triton/issues/8539", "riton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'", "arch_unsupported", "triton-ptxas"),
    // TensorRT's runtime (libnvinfer_lean's strings): an engine of another release, of another GPU.
    c("https://github.com/RootKit-Org/AI-Aimbot/issues/109", "[06/26/2023-14:33:11] [TRT] [I] Loaded engine size: 15 MiB\n[06/26/2023-14:33:12] [TRT] [E] 6: The engine plan file is not compatible with this version of TensorRT, expecting library version 8.5.1.7 got 8.5.3.1, please rebuild.", "cuda_runtime_mismatch", "trt-engine-version"),
    c("https://github.com/run-llama/llama_index/issues/12318", "[03/27/2024-11:09:02] [TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting compute 8.0 got compute 8.9, please rebuild.", "arch_unsupported", "trt-engine-device"),
    // TensorRT 8's CUDA start-up (error 35: the driver older than TensorRT's CUDA), older wording.
    c("https://github.com/wang-xinyu/tensorrtx/issues/685", "[E] [TRT] CUDA initialization failure with error 35.\n Please check your CUDA installation:  http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html", "driver_too_old", "trt-cuda-init"),
    // A TensorRT engine with a plugin layer loaded without the plugin's library.
    c("https://github.com/NVIDIA/TensorRT/issues/3327", "**ERROR: [TRT]: 1: [pluginV2Runner.cpp::load::290] Error Code 1: Serialization (Serialization assertion creator failed.Cannot deserialize plugin since corresponding IPluginCreator not found in Plugin Registry)**\n**ERROR: [TRT]: 4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)**", "configuration", "trt-plugin-missing"),
    // Triton's launcher build (runtime/build.py) on Windows without a compiler.
    c("https://github.com/thu-ml/SageAttention/issues/7", "  File \"D:\\CogVideoX\\CogVideo\\venv\\lib\\site-packages\\triton\\runtime\\build.py\", line 52, in _build\n    raise RuntimeError(\"Failed to find C compiler. Please specify via CC environment variable.\")\nRuntimeError: Failed to find C compiler. Please specify via CC environment variable.", "configuration", "triton-no-cc"),
    // OpenCL's codes by name (CL/cl.h, CL/cl_ext.h), and pyopencl's form without the prefix.
    c("https://github.com/IFCA-Advanced-Computing/opencl/issues/44", "When trying to run the examples I'm getting the following exception:\n`CL_PLATFORM_NOT_FOUND_KHR`", "driver_missing", "opencl-no-platform"),
    c("https://github.com/inducer/pyopencl/issues/283", ">>> cl.create_some_context()\n    platforms = get_platforms()\npyopencl._cl.LogicError: clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR", "driver_missing", "opencl-no-platform"),
    c("https://github.com/Probe-Particle/PPSTM/issues/77", "RuntimeError: clEnqueueNDRangeKernel failed: OUT_OF_RESOURCES", "gpu_memory_exhausted", "opencl-out-of-resources"),
    c("https://github.com/lukeiwanski/tensorflow/issues/172", "OpenCL error Error: [ComputeCpp:RT0208] Failed to enqueue OpenCL command (clEnqueueNDRangeKernel) CL_OUT_OF_RESOURCES", "gpu_memory_exhausted", "opencl-out-of-resources"),
    c("https://github.com/fireice-uk/xmr-stak/issues/1", "The error `Error CL_INVALID_WORK_GROUP_SIZE when calling clEnqueueNDRangeKernel for kernel 0.` still exists", "application_error", "opencl-program-error"),
    // ONNX Runtime's session: the CPU package, wrapped by the terminal.
    c("https://github.com/s9roll7/animatediff-cli-prompt-travel/issues/206", "onnxruntime_inference_collection.py:69: UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider\nnames.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'", "cpu_only_build", "onnxruntime-cpu"),
    // bitsandbytes' CUDA SETUP (0.3x/0.4x) and its CPU fallback.
    c("https://github.com/bitsandbytes-foundation/bitsandbytes/issues/138", "CUDA SETUP: Detected CUDA version 102\nCUDA SETUP: Required library version not found: libbitsandbytes_cuda102.so. Maybe you need to compile it from source?\nCUDA SETUP: Defaulting to libbitsandbytes_cpu.so...", "cuda_runtime_mismatch", "bnb-cuda-setup"),
    c("https://github.com/deepseek-ai/DeepSeek-Coder/issues/97", "D:\\miniconda3\\envs\\DeepSeek\\lib\\site-packages\\bitsandbytes\\cextension.py:34: UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.", "cpu_only_build", "bnb-cpu"),
    // CTranslate2 (faster-whisper) without CUDA (src/devices.cc).
    c("https://github.com/OpenNMT/CTranslate2/issues/1908", "  File \"/usr/local/lib/python3.10/dist-packages/faster_whisper/transcribe.py\", line 647, in __init__\n    self.model = ctranslate2.models.Whisper(\nValueError: This CTranslate2 package was not compiled with CUDA support", "cpu_only_build", "ct2-cpu"),
];

#[test]
fn each_family_comes_back_with_its_cause() {
    let m = Matrix::embedded().unwrap();
    let mut bad = Vec::new();
    for case in CASES {
        let v = explain_text(case.text, &m);
        let Some(first) = v.first() else {
            bad.push(format!("{}: no match", case.source));
            continue;
        };
        if first.category.as_str() != case.category || first.code != case.signature {
            bad.push(format!(
                "{}: got {} ({}), want {} ({})",
                case.source,
                first.code,
                first.category.as_str(),
                case.signature,
                case.category
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The families' cause, on the issue's own list of texts that printed "No known code or message
/// matched" (issue 30; a reworded title and a bare text from the threads it measured).
#[test]
fn a_reworded_short_title_and_a_bare_text_are_recognised() {
    let m = Matrix::embedded().unwrap();
    let first = |t: &str| {
        explain_text(t, &m)
            .first()
            .map(|x| (x.code.clone(), x.category.as_str()))
    };
    assert_eq!(
        first("Torch not being compiled with CUDA enabled"),
        Some((serde_json::json!("torch-cpu"), "cpu_only_build"))
    );
    assert_eq!(
        first("out of memory"),
        Some((serde_json::json!("cuda-oom"), "gpu_memory_exhausted"))
    );
    // Key words need the negation and a short line: a positive statement, or a long line that
    // happens to hold the words, is not the message.
    assert!(!explain_text("Torch compiled with CUDA enabled: True", &m)
        .iter()
        .any(|x| x.category.as_str() == "cpu_only_build"));
    let long = "Loading model... torch version 2.5.1 was not compiled by us, but CUDA support is enabled per config file settings";
    assert!(!explain_text(long, &m)
        .iter()
        .any(|x| x.category.as_str() == "cpu_only_build"));
    // Key words are for a whole short text: in a longer paste the bare line is one clue among
    // others (https://github.com/microsoft/WSL/issues/7852: deviceQuery's failure leads).
    let query = "./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\ncudaGetDeviceCount returned 2\n-> out of memory\nResult = FAIL";
    assert_eq!(
        explain_text(query, &m).first().map(|x| x.category.as_str()),
        Some("smoke_failure")
    );
    // The host's OOM killer is not the CUDA text.
    let host = explain_text(
        "Out of memory: Killed process 4242 (python) total-vm:9000kB",
        &m,
    );
    assert_eq!(
        host.first().map(|x| x.category.as_str()),
        Some("host_memory_exhausted")
    );
}

/// A message wrapped across two lines still reads as its family: at a word (an issue form) and
/// in the middle of a word (a terminal's hard wrap at 60 columns), the real text of
/// https://github.com/kleinlee/DH_live/issues/22.
#[test]
fn a_wrapped_message_is_recognised() {
    let m = Matrix::embedded().unwrap();
    let text = "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.";
    let at_word = text.replacen("a CUDA device", "a CUDA\ndevice", 1);
    let hard: String = text
        .chars()
        .collect::<Vec<_>>()
        .chunks(60)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        hard.lines().next().unwrap().ends_with("a CUDA dev"),
        "{hard}"
    );
    for t in [at_word, hard] {
        let v = explain_text(&t, &m);
        assert_eq!(
            v.first().map(|x| x.code.clone()),
            Some(serde_json::json!("torch-load-no-cuda")),
            "{t}"
        );
    }
}

/// Every family joins its signature in the embedded catalog, with the signature's category.
#[test]
fn every_family_joins_a_signature_of_its_category() {
    let cat = gpudoctor::explain::catalog::Catalog::embedded().unwrap();
    let fams = gpudoctor::knowledge::messages::families();
    assert!(fams.len() >= 30);
    for f in fams {
        // A family that names a signal and no signature is the signal's reading.
        let signal_id = f
            .signal
            .as_deref()
            .map(|n| format!("signal-{}", n.to_ascii_lowercase()));
        let sig = f.signature.as_deref().or(signal_id.as_deref()).unwrap();
        let Some((i, _)) = cat.families.iter().find(|(_, x)| x.id == f.id) else {
            panic!("{} did not join {sig}", f.id);
        };
        let s = &cat.signatures[*i];
        assert_eq!(s.id, sig);
        assert!(
            s.category.as_str() == f.category || s.also.iter().any(|a| a.as_str() == f.category),
            "{}: family says {}, signature {} says {}",
            f.id,
            f.category,
            s.id,
            s.category.as_str()
        );
    }
    // Every family is found by the log scanner (its prefilter covers the family's anchor): a
    // line of the family's pieces, holes filled, among ordinary training lines.
    let m = gpudoctor::matrix::Matrix::embedded().unwrap();
    for (i, f) in cat.families.iter().map(|(i, f)| (*i, f)) {
        if f.anchor().is_none() {
            continue; // a family of key words only (a bare "out of memory"), never a log line
        }
        let mut log = String::new();
        for k in 0..200 {
            log.push_str(&format!("epoch 1 step {k} loss 0.{k} cuda:0 lr 0.001\n"));
        }
        // A family with a regex is its whole format (its pieces alone lack the structure).
        if f.regex.is_some() {
            log.push_str(&printed(f));
        } else {
            log.push_str(&f.pieces.join(" 7 "));
        }
        log.push('\n');
        let r = gpudoctor::explain::logscan::scan_with(log.as_bytes(), &m, &cat).unwrap();
        let sig = &cat.signatures[i].id;
        assert!(
            r.matches.iter().any(|x| x.code == serde_json::json!(sig)
                || x.category.as_str() == cat.signatures[i].category.as_str()),
            "{}: the scan of {:?} found {:?}",
            f.id,
            f.pieces,
            r.matches.iter().map(|x| &x.code).collect::<Vec<_>>()
        );
    }
}

/// `explain --log` finds the families in a log through the scanner's prefilter (their anchors
/// are in its cover): ordinary training lines around two real lines
/// (https://github.com/AlexeyAB/darknet/issues/8551, https://github.com/mrnabati/CenterFusion/issues/76).
#[test]
fn a_log_scan_finds_the_families() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("train.log");
    let mut log = String::new();
    for i in 0..2000 {
        log.push_str(&format!("epoch 1 step {i} loss 0.{i} cuda:0 lr 0.001\n"));
    }
    log.push_str("Could not locate zlibwapi.dll. Please make sure it is in your library path!\n");
    log.push_str("RuntimeError: CUDA error: the launch timed out and was terminated\n");
    std::fs::write(&f, log).unwrap();
    let r = Run::new()
        .args(["explain", "--json", "--log"])
        .arg_path(&f)
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let codes: Vec<String> = r.json()["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["code"].to_string())
        .collect();
    assert!(
        codes.contains(&"\"cudnn-zlibwapi\"".to_string()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"\"cuda-launch-timeout\"".to_string()),
        "{codes:?}"
    );
}

fn script(args: &[&str]) -> std::process::Output {
    std::process::Command::new("timeout")
        .arg("300")
        .arg(common::python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/knowledge/msg_families.py"
        ))
        .args(args)
        .output()
        .expect("python runs scripts/knowledge")
}

/// `build --check`: the committed knowledge/messages/*.yaml are what the generator writes from
/// the committed mined JSON and the mapping (runs everywhere).
#[test]
fn the_built_families_are_what_the_generator_writes() {
    let o = script(&["build", "--check"]);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `mine --check`: where the pinned sources are present (fetched mirrors, downloaded wheels),
/// the committed mined JSON is what they give; an absent input is skipped and said.
#[test]
fn the_mined_families_are_what_the_sources_give_where_present() {
    script_succeeds(&["mine", "--check"]);
}

/// Runs the generator with `args` and asserts it exits 0 (its report printed either way).
fn script_succeeds(args: &[&str]) {
    let o = script(args);
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("{out}");
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `extract --check`: where the pinned inputs of `kind: pinned` are fetched (the wheel members,
/// Debian tarballs and .debs under .knowledge-inputs/msg/, the git mirrors), the committed
/// scripts/knowledge/msg-extract.json is what they give; an input not here is kept and said.
#[test]
fn the_pinned_extract_is_what_the_pinned_inputs_give_where_present() {
    script_succeeds(&["extract", "--check"]);
}

/// The pinned inputs are mined from the committed extract, everywhere: a reworded line in the
/// extract makes `mine --check` fail, and so does a pin of the mapping the extract was not made
/// from (a copy of the generator, its mapping, extract and outputs, with no mirror or wheel).
#[test]
fn an_edit_of_the_pinned_message_extract_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = [
        "scripts/knowledge/msg_families.py",
        "scripts/knowledge/msg-extract.json",
        "scripts/knowledge/inputs.py",
        "scripts/knowledge/inputs.lock",
        "knowledge/mapping/messages.yaml",
    ];
    for f in files {
        std::fs::create_dir_all(dir.path().join(f).parent().unwrap()).unwrap();
        std::fs::copy(root.join(f), dir.path().join(f)).unwrap();
    }
    for sub in ["knowledge/mined", "knowledge/messages"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(root.join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
        }
    }
    let none = dir.path().join("none");
    let mine = |d: &std::path::Path| {
        std::process::Command::new("timeout")
            .arg("300")
            .arg(common::python())
            .args(["scripts/knowledge/msg_families.py", "mine", "--check"])
            .env("GPUDOCTOR_MIRRORS", &none)
            .env("GPUDOCTOR_WHEELS", &none)
            .current_dir(d)
            .output()
            .unwrap()
    };
    let o = mine(dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // DCGM's message reworded in the extract: the committed mined data is stale.
    let p = dir.path().join("scripts/knowledge/msg-extract.json");
    let t = std::fs::read_to_string(&p).unwrap();
    let was = "Detected clocks event due to thermal violation";
    assert!(t.contains(was));
    std::fs::write(&p, t.replacen(was, "Detected clocks event due to heat", 1)).unwrap();
    let o = mine(dir.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !o.status.success() && out.contains("msg-dcgm.json"),
        "{out}"
    );
    // Another nvidia-smi pinned in the mapping: the extract was not made from it.
    std::fs::write(&p, t).unwrap();
    let m = dir.path().join("knowledge/mapping/messages.yaml");
    let map = std::fs::read_to_string(&m).unwrap();
    let pin = "9b4392fa97957603d96f3cf1141fe78d871f5bcdd2e6bf810bce278cc14cb6d4";
    assert!(map.contains(pin));
    std::fs::write(&m, map.replacen(pin, &"0".repeat(64), 1)).unwrap();
    let o = mine(dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no extract for the pins"),
        "{err}"
    );
}

/// A family's format (or shape) printed as its emitter prints it: the family's `value` for its
/// first hole where it has one (FFmpeg 3.x's "...: 0x%x" printed as 0x2), numbers for number
/// holes, a job's `+` for zsh's `%c`, a command for text.
fn printed(f: &gpudoctor::knowledge::messages::Family) -> String {
    let hole =
        regex::Regex::new(r"\{[^{}]*\}|%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[sdiuxXfgeEpcvqwUrR]")
            .unwrap();
    let fmt = f.shape.as_deref().unwrap_or(&f.format);
    let mut k = 0;
    hole.replace_all(fmt, |c: &regex::Captures| {
        k += 1;
        let h = &c[0];
        if let (1, Some(v)) = (k, f.value.as_deref()) {
            v.to_string()
        } else if h.ends_with('c') && h.starts_with('%') {
            "+".to_string()
        } else if h.ends_with(['d', 'u', 'i']) {
            format!("{}", 1000 + k)
        } else {
            "python3 train.py".to_string()
        }
    })
    .into_owned()
}

/// Every family that carries a regex (its pieces alone are short or common words) is recognised
/// on a line built from its own format or shape, holes printed as an emitter prints them, after a
/// log prefix; the same line with its structure broken is not the family.
#[test]
fn a_line_built_from_each_strict_format_is_its_family() {
    let cat = gpudoctor::explain::catalog::Catalog::embedded().unwrap();
    let mut n = 0;
    for (i, f) in cat.families.iter().map(|(i, f)| (*i, f)) {
        let Some(rx) = &f.regex else {
            continue;
        };
        n += 1;
        let line = format!("Nov 25 10:00:01 node7 job[42]: {}", printed(f));
        let hits = cat.matches(&line);
        assert!(hits.contains(&i), "{}: {line:?} gave {hits:?}", f.id);
        if !rx.contains(r"\d") {
            continue;
        }
        // The pieces without the structure (numbers gone) are not the family.
        let broken: String = line.chars().filter(|c| !c.is_ascii_digit()).collect();
        let fam_only = cat.families.iter().any(|(_, g)| {
            g.id == f.id && g.matches_pieces(&gpudoctor::explain::catalog::normalise(&broken))
        });
        assert!(!fam_only, "{}: {broken:?}", f.id);
    }
    assert!(n >= 4, "{n} strict families");
}

/// Texts that hold the families' words without being their messages: nothing is blamed on the
/// GPU or the driver, and the shells' families do not fire.
#[test]
fn the_new_families_leave_their_decoys_alone() {
    let m = Matrix::embedded().unwrap();
    for t in [
        "I killed the process myself with kill -9 because it hung",
        "ModuleNotFoundError: No module named 'psutil'",
        "line 12: 40 skilled workers were assigned",
        "[1]  + 14875 done       python main.py",
        "sending the report to process owners, uid mapping done",
        "group 3 is viable for passthrough",
        "the earlier message said 'Killed' was a typo in the docs of line 3",
        "Epoch 3: the mismatches in the version table were fixed",
    ] {
        let v = explain_text(t, &m);
        let first = v.first().map(|x| x.category.as_str());
        assert!(
            !matches!(
                first,
                Some("hardware_fault" | "driver_fault" | "ecc_memory" | "smoke_failure")
            ),
            "{t}: {first:?}"
        );
        assert!(
            !v.iter()
                .any(|x| x.code == serde_json::json!("host-killed-line")
                    || x.code == serde_json::json!("vfio-group")
                    || x.code == serde_json::json!("oom-daemon")),
            "{t}: {:?}",
            v.iter().map(|x| &x.code).collect::<Vec<_>>()
        );
    }
}

/// CUDA's launch-resources error spells OpenCL's name after `ERROR_LAUNCH_` (and `_` is a word
/// boundary): it is CUDA error 701, the kernel's registers or threads per block, not OpenCL.
#[test]
fn cuda_s_launch_out_of_resources_is_not_opencl_s() {
    let m = Matrix::embedded().unwrap();
    // https://github.com/JuliaGPU/CuArrays.jl/issues/211
    let t = "ERROR: CUDA error: too many resources requested for launch (code #701, ERROR_LAUNCH_OUT_OF_RESOURCES)";
    let v = explain_text(t, &m);
    assert!(
        !v.iter()
            .any(|x| x.code == serde_json::json!("opencl-out-of-resources")),
        "{:?}",
        v.iter().map(|x| &x.code).collect::<Vec<_>>()
    );
    assert_eq!(
        v.first().map(|x| x.category.as_str()),
        Some("application_error")
    );
}

/// A shell's "Killed" is SIGKILL's: likely the OOM killer, with the less common senders after.
#[test]
fn a_killed_job_is_likely_host_memory_with_its_other_causes() {
    let m = Matrix::embedded().unwrap();
    let v = explain_text("/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3 main.py --epochs 400", &m);
    let first = v.first().unwrap();
    assert_eq!(first.category.as_str(), "host_memory_exhausted");
    assert_eq!(first.confidence, "medium");
    assert!(
        v.iter().any(|x| x.category.as_str() == "application_error"),
        "{v:?}"
    );
}

/// A shell's "Aborted (core dumped)" (dash's " (core dumped)" after glibc's strsignal text) is
/// SIGABRT's reading from explain-catalog/codes.yaml, its one home; it stays below the message
/// that says why the program aborted (https://github.com/pjreddie/darknet/issues/304).
#[test]
fn an_aborted_job_is_sigabrt_from_the_code_table() {
    let m = Matrix::embedded().unwrap();
    let v = explain_text("Aborted (core dumped)", &m);
    let first = v.first().unwrap();
    assert_eq!(first.kind, "signal");
    assert_eq!(first.code, serde_json::json!("SIGABRT"));
    let sig = gpudoctor::explain::tables::tables()
        .unwrap()
        .signals
        .codes
        .iter()
        .find(|s| s.name == "SIGABRT")
        .unwrap();
    assert_eq!(first.category, sig.category);
    let zsh = explain_text("zsh: abort (core dumped)  ./train --epochs 3", &m);
    assert_eq!(
        zsh.first().map(|x| x.code.clone()),
        Some(serde_json::json!("SIGABRT"))
    );
    let darknet = "layer     filters    size              input                output\n    0 CUDA Error: out of memory\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\nAborted (core dumped)";
    let v = explain_text(darknet, &m);
    assert_eq!(
        v.first().map(|x| x.category.as_str()),
        Some("gpu_memory_exhausted")
    );
    assert!(
        v.iter().any(|x| x.code == serde_json::json!("SIGABRT")),
        "{v:?}"
    );
    // "aborted" in prose is not the shell's report.
    assert!(
        !explain_text("I aborted the run (core files were dumped later)", &m)
            .iter()
            .any(|x| x.code == serde_json::json!("SIGABRT"))
    );
}

/// The framework families (famsfw) and their new signatures stay off texts that share their
/// words without being their messages.
#[test]
fn the_framework_families_leave_their_decoys_alone() {
    let m = Matrix::embedded().unwrap();
    for t in [
        "We use the spawn start method for multiprocessing in the data loader",
        "Found GPU0 and GPU1 in the inventory; both have compute capability 8.6",
        "the kernel driver does not appear in lsmod until the module is built",
        "GET /api/engines returned 404: unable to find an engine named default",
        "the driver is older than the one in the docs, parallel compilation is on",
        "Your installed torch==2.5.1 includes kernels for this GPU",
        "no published builds for this release yet",
        "libNVVM is found in /usr/local/cuda/nvvm/lib64",
    ] {
        let v = explain_text(t, &m);
        let codes: Vec<_> = v.iter().map(|x| x.code.clone()).collect();
        for sig in [
            "cuda-fork",
            "cudnn-no-engine",
            "driver-not-loaded",
            "xla-ptxas-driver",
            "sm-incompatible",
            "missing-library",
        ] {
            assert!(!codes.contains(&serde_json::json!(sig)), "{t}: {codes:?}");
        }
    }
}

/// The families' words in ordinary text are not the message: each needs its emitter's whole
/// phrase, word-bounded.
#[test]
fn ordinary_lines_with_the_same_words_are_not_the_system_families() {
    let m = Matrix::embedded().unwrap();
    let ours = [
        "kernel-headers-missing",
        "dkms-conf-missing",
        "installer-module-load",
        "installer-driver-in-use",
        "kernel-cc-mismatch",
        "persistenced-devices",
        "smi-no-devices",
        "smi-nvml-missing",
        "cdi-unresolvable",
        "nccl-network",
        "nccl-shm",
    ];
    for line in [
        "Installing kernel headers for 6.8.0-45-generic ... done",
        "dkms.conf updated; the module builds for every installed kernel",
        "Loading the kernel module nvidia took 1.2 s",
        "No devices were detected as busy; continuing",
        "The compiler version is gcc 12.2, the same as the kernel's",
        "Querying NVIDIA devices: 8 found",
        "CDI devices resolved: nvidia.com/gpu=all",
        "An NVIDIA kernel module upgrade is available",
        "the upload failed to extend the file by 3 bytes",
        "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
        "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
    ] {
        let hit = read_as(line, &ours, &m);
        assert!(hit.is_empty(), "{line:?} read as {hit:?}");
    }
}

/// The inference runtimes' families (famsinfer) need their own words in their order: ordinary
/// lines that share some of them are none of their signatures.
#[test]
fn the_inference_runtime_families_leave_their_decoys_alone() {
    let m = Matrix::embedded().unwrap();
    for t in [
        "Saving the engine plan file to model.engine (TensorRT 10.3, FP16)",
        "The engine plan file is compatible with this version of TensorRT",
        "Triton kernel autotuning: Required: 4 warps, 3 stages; out of 12 configs, 2 kept",
        "Installed CUDA version 12.4 matches the version torch was compiled with",
        "CUDA SETUP: Loading binary /opt/venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda124.so...",
        "Library libcublas.so.12 loaded from /usr/local/cuda/lib64",
        "Available providers: 'TensorrtExecutionProvider, CUDAExecutionProvider, CPUExecutionProvider'",
        "ptxas info    : Used 64 registers, 384 bytes cmem[0]",
        "ollama discovered 2 compatible GPUs (CUDA, compute 8.6)",
    ] {
        let v = explain_text(t, &m);
        let codes: Vec<_> = v.iter().map(|x| x.code.clone()).collect();
        for sig in [
            "trt-engine-version",
            "trt-engine-device",
            "triton-out-of-resources",
            "triton-ptxas",
            "torch-ext-cuda-mismatch",
            "bnb-cuda-setup",
            "bnb-cpu",
            "ct2-cpu",
            "onnxruntime-cpu",
            "missing-library",
            "container-no-gpu-visible",
        ] {
            assert!(!codes.contains(&serde_json::json!(sig)), "{t}: {codes:?}");
        }
    }
}

/// Each text the CUDA runtime prints for an error in its own words (knowledge/cuda-runtime.yaml
/// `alone`, read from libcudart's cudaGetErrorString by scripts/knowledge/codes.py) names that
/// error when a program prints it after a prefix of its own, with no "CUDA error" beside it.
#[test]
fn the_runtime_s_own_error_texts_name_their_error() {
    let m = Matrix::embedded().unwrap();
    let e = gpudoctor::knowledge::codes::emitter("cuda-runtime").unwrap();
    let alone: Vec<_> = e.entries.iter().filter(|c| c.alone).collect();
    assert!(alone.len() >= 60, "{}", alone.len());
    for c in alone {
        let line = format!("[worker 3] checked call at step 120 returned: {}", c.text);
        let v = explain_text(&line, &m);
        let named = v.iter().any(|x| {
            x.kind == "cuda_error"
                && x.code
                    .as_i64()
                    .is_some_and(|n| e.entries.iter().any(|d| d.has_num(n) && d.text == c.text))
        });
        // A text with a signature of its own (no-kernel-image, device-assert...) comes back
        // under it, with the code's category.
        let first = v.first().map(|x| x.category.as_str().to_string());
        assert!(
            named || first.as_deref() == Some(c.category.as_str()),
            "{line}: {:?}",
            v.iter().map(|x| (&x.kind, &x.code)).collect::<Vec<_>>()
        );
    }
}

/// Real texts that quote the runtime's words without its name (each from its thread), and the
/// plain texts other programs print in the same words, which are not CUDA's.
#[test]
fn a_quoted_runtime_text_is_its_error_and_a_plain_one_is_not() {
    let m = Matrix::embedded().unwrap();
    for (source, text, code) in [
        (
            "https://github.com/HazyResearch/ThunderKittens/issues/37",
            "[4090 attn] cudaCheckError(): too many resources requested for launch",
            701,
        ),
        // CTranslate2's CUDA_CHECK (src/cuda/utils.h): "CUDA failed with error " and the text.
        (
            "https://github.com/Purfview/whisper-standalone-win/issues/255",
            "RuntimeError: CUDA failed with error out of memory",
            2,
        ),
        (
            "https://github.com/laugh12321/TensorRT-YOLO/issues/74",
            "    Error text: invalid device function",
            98,
        ),
    ] {
        let v = explain_text(text, &m);
        assert!(
            v.iter()
                .any(|x| x.kind == "cuda_error" && x.code == serde_json::json!(code)),
            "{source}: {:?}",
            v.iter().map(|x| (&x.kind, &x.code)).collect::<Vec<_>>()
        );
    }
    for t in [
        "sd 0:0:0:0: [sda] tag#0 Device not ready",
        "mount: /mnt/x: operation not supported.",
        "ERROR: file not found: data/train.csv",
        "Process ended: unknown error while parsing arguments",
        "dlsym: named symbol not found",
    ] {
        let v = explain_text(t, &m);
        assert!(
            !v.iter().any(|x| x.kind == "cuda_error"),
            "{t}: {:?}",
            v.iter().map(|x| (&x.kind, &x.code)).collect::<Vec<_>>()
        );
    }
}

/// Session 16's signatures from their emitters (nvcc missing as the shells, CMake and Theano say
/// it; PaddlePaddle's allocator; MATLAB's and CUDA.jl's driver checks) need their emitter's
/// phrase: lines that only name nvcc, Paddle or a driver version are not them.
#[test]
fn the_toolkit_and_driver_check_signatures_leave_their_decoys_alone() {
    let m = Matrix::embedded().unwrap();
    let ours = [
        "nvcc-not-found",
        "paddle-oom",
        "matlab-cuda-driver-too-old",
        "matlab-cuda-driver-missing",
        "julia-cuda-driver-too-old",
    ];
    for line in [
        "nvcc: NVIDIA (R) Cuda compiler driver",
        "-- The CUDA compiler identification is NVIDIA 12.4.131",
        "Found nvcc at /usr/local/cuda/bin/nvcc; the toolkit was found, version 12.4",
        "PaddlePaddle 2.6.1 is installed on GPU 0; run paddle.utils.run_check()",
        "The CUDA driver was loaded: version 12.4 supports CUDA 12.4",
        "CUDA driver 12.4.0 is compatible with the CUDA toolkit 12.3.2",
    ] {
        let hit = read_as(line, &ours, &m);
        assert!(hit.is_empty(), "{line:?} read as {hit:?}");
    }
    for (line, code) in [
        ("/bin/sh: 1: nvcc: not found", "nvcc-not-found"),
        ("bash: nvcc: command not found", "nvcc-not-found"),
        (
            "'nvcc' is not recognized as an internal or external command,",
            "nvcc-not-found",
        ),
        (
            "Out of memory error on GPU 1. Cannot allocate 2.000000GB memory on GPU 1",
            "paddle-oom",
        ),
    ] {
        let found = explain_text(line, &m);
        let codes: Vec<String> = found.iter().map(|x| x.code.to_string()).collect();
        assert!(
            found.iter().any(|x| x.code == code),
            "{line:?} read as {codes:?}"
        );
    }
}

/// The graphics and video APIs' status codes (knowledge/messages/vulkan.yaml, dxgi.yaml: every
/// code of VkResult and of winerror.h's DXGI/Direct3D HRESULTs), by name and by number with the
/// API's context, in real texts (each names its thread): the first answer is the code itself
/// (its name and value), with the category of what it means on a machine with an NVIDIA GPU.
#[test]
fn the_graphics_api_codes_come_back_with_their_cause() {
    let m = Matrix::embedded().unwrap();
    let cases: &[(&str, &str, &str, &str)] = &[
        // (thread, text, the code's name, category)
        ("https://github.com/RPCS3/rpcs3/issues/10926", "Nvidia drivers - Device lost (Driver crashed with unspecified error or stopped responding and recovered) (VK_ERROR_DEVICE_LOST)", "VK_ERROR_DEVICE_LOST", "driver_fault"),
        ("https://github.com/ValveSoftware/Dota-2-Vulkan/issues/355", "10/06 20:03:39 [RenderSystem] Vulkan swapchain out-of-date, suboptimal, or surface lost - recreating. Result: (VK_ERROR_DEVICE_LOST)", "VK_ERROR_DEVICE_LOST", "driver_fault"),
        ("https://github.com/eliasdaler/edbr/issues/4", "i'm getting VK_ERROR_OUT_OF_DEVICE_MEMORY from GfxDevice::createImageRaw", "VK_ERROR_OUT_OF_DEVICE_MEMORY", "gpu_memory_exhausted"),
        ("https://github.com/n00mkrad/flowframes/issues/12", "vkAllocateMemory failed -2", "VK_ERROR_OUT_OF_DEVICE_MEMORY", "gpu_memory_exhausted"),
        ("https://github.com/nihui/realsr-ncnn-vulkan/issues/48", "vkCreateInstance failed -9\nvkCreateInstance failed -9\ninvalid gpu device", "VK_ERROR_INCOMPATIBLE_DRIVER", "driver_missing"),
        ("https://github.com/ec-/Quake3e/issues/176", "Sys_Error: Vulkan: instance creation failed with VK_ERROR_INCOMPATIBLE_DRIVER", "VK_ERROR_INCOMPATIBLE_DRIVER", "driver_missing"),
        ("https://github.com/nihui/waifu2x-ncnn-vulkan/issues/131", "vkCreateInstance failed -3", "VK_ERROR_INITIALIZATION_FAILED", "driver_too_old"),
        ("https://github.com/ValveSoftware/gamescope/pull/2015", "[gamescope] [Error] vulkan: vkCreateDevice failed (VkResult: -7)", "VK_ERROR_EXTENSION_NOT_PRESENT", "driver_too_old"),
        ("https://github.com/Frogging-Family/nvidia-all/issues/38", "LowLevelFatalError [File:Unknown] [Line: 794] Result failed, VkResult=-3 at D:/Build/++UE4/Sync/Engine/Source/Runtime/VulkanRHI/Private/VulkanSwapChain.cpp:493 with error VK_ERROR_INITIALIZATION_FAILED Signal 11 caught.", "VK_ERROR_INITIALIZATION_FAILED", "driver_too_old"),
        ("https://github.com/nokyan/resources/issues/418", "(resources:2): Gdk-WARNING **: 22:29:30.232: vkCreateWaylandSurfaceKHR(): A host memory allocation has failed. (VK_ERROR_OUT_OF_HOST_MEMORY) (-1)", "VK_ERROR_OUT_OF_HOST_MEMORY", "host_memory_exhausted"),
        ("https://github.com/azer89/HelloVulkan/issues/136", "the vkAllocateDescriptorSets is returning VK_ERROR_OUT_OF_POOL_MEMORY.", "VK_ERROR_OUT_OF_POOL_MEMORY", "application_error"),
        // Vulkan-Hpp's names (vulkan_to_string.hpp), as its exceptions print them.
        ("https://github.com/mani-skill/ManiSkill/issues/1374", "RuntimeError: vk::createInstanceUnique: ErrorIncompatibleDriver", "ErrorIncompatibleDriver", "driver_missing"),
        ("https://github.com/michaildoukas/headGAN/issues/8", "RuntimeError: vk::createInstanceUnique: ErrorExtensionNotPresent", "ErrorExtensionNotPresent", "driver_too_old"),
        ("https://github.com/Glavnokoman/vuh/issues/67", "libc++abi: terminating with uncaught exception of type vk::IncompatibleDriverError: vk::createInstance: ErrorIncompatibleDriver\nAbort trap: 6", "ErrorIncompatibleDriver", "driver_missing"),
        ("https://github.com/ppy/osu/issues/26400", "2024-01-05 04:30:24 [error]: SharpGen.Runtime.SharpGenException: HRESULT: [0x887A0005], Module: [Vortice.DXGI], ApiCode: [DXGI_ERROR_DEVICE_REMOVED/DeviceRemoved], Message: [The GPU device instance has been suspended. Use GetDeviceRemovedReason to determine the appropriate action.", "DXGI_ERROR_DEVICE_REMOVED", "driver_fault"),
        ("https://github.com/MMmmmoko/CatTuber_Cats/issues/1", "CatGraphic Exception\nError Code : 0x887A0005", "DXGI_ERROR_DEVICE_REMOVED", "driver_fault"),
        ("https://github.com/FakeFishGames/Barotrauma/issues/10540", "Crashing with the error DXGI_ERROR_DEVICE_REMOVED (0x887A0005, 0x887A0020)", "DXGI_ERROR_DEVICE_REMOVED", "driver_fault"),
        ("https://github.com/microsoft/DirectX-Graphics-Samples/issues/253", "D3D12CreateDevice return 0x887a0004, but D3D11CreateDevice will create device OK.", "DXGI_ERROR_UNSUPPORTED", "arch_unsupported"),
        // Direct3D 9's D3DERR_* (d3d9.h, MAKE_D3DHRESULT), by name and as the HRESULT SharpDX prints.
        ("https://github.com/FakeFishGames/Barotrauma/issues/10438", "Exception: HRESULT: [0x8876017C], Module: [Unknown], ApiCode: [Unknown/Unknown], Message: Unknown (SharpDX.SharpDXException)", "D3DERR_OUTOFVIDEOMEMORY", "gpu_memory_exhausted"),
        ("https://github.com/Facepunch/garrysmod-issues/issues/2701", "217(777.967951):  ShaderAPIDX8::CreateD3DTexture: D3DERR_OUTOFVIDEOMEMORY", "D3DERR_OUTOFVIDEOMEMORY", "gpu_memory_exhausted"),
        // NVENCSTATUS (nvEncodeAPI.h), by name and as NVIDIA's samples, NVEnc and FFmpeg print it;
        // status 10 from nvEncOpenEncodeSessionEx is the session limit first (docs/decisions.md).
        ("https://github.com/NVIDIA/open-gpu-kernel-modules/issues/415", "NvEncoder : m_nvenc.nvEncOpenEncodeSessionEx(&encodeSessionExParams, &hEncoder) returned error 10", "NV_ENC_ERR_OUT_OF_MEMORY", "configuration"),
        ("https://github.com/NVIDIA/NvPipe/issues/62", "Failed to create encoder (NvEncoder::NvEncoder : m_nvenc.nvEncOpenEncodeSessionEx(&encodeSessionExParams, &hEncoder) returned error 10 at g:\\main repo\\nvpipe\\nvpipe-master\\src\\nvcodec\\nvencoder\\nvencoder.cpp:54", "NV_ENC_ERR_OUT_OF_MEMORY", "configuration"),
        ("https://github.com/rigaya/NVEnc/issues/753", "nvenc : Error on nvEncInitializeEncoder: 8 (DPB size should be greater than or equal to 3 for B as reference.)\nFailed to create encoder", "NV_ENC_ERR_INVALID_PARAM", "configuration"),
        ("https://github.com/HandBrake/HandBrake/issues/1998", "[h264_nvenc @ 00000198ad95a9c0] OpenEncodeSessionEx failed: unsupported device (2)\n[h264_nvenc @ 00000198ad95a9c0] No NVENC capable devices found", "NV_ENC_ERR_UNSUPPORTED_DEVICE", "arch_unsupported"),
        ("https://github.com/hecomi/uNvEncoder/issues/2", "s_nvenc.nvEncEncodePicture call failed: NV_ENC_ERR_INVALID_PARAM.", "NV_ENC_ERR_INVALID_PARAM", "configuration"),
        ("https://github.com/LizardByte/Sunshine/issues/4469", "[2025-12-09 01:05:40.612]: Error: NvEnc: NvEncInitializeEncoder() failed: NV_ENC_ERR_INVALID_PARAM\n[2025-12-09 01:05:40.612]: Error: NvEnc: NvEncUnregisterAsyncEvent() failed: NV_ENC_ERR_DEVICE_NOT_EXIST", "NV_ENC_ERR_INVALID_PARAM", "configuration"),
        ("https://github.com/SuRGeoNix/Flyleaf/issues/387", "SharpGen.Runtime.SharpGenException: HRESULT: [0x887A0001], Module: [Vortice.DXGI], ApiCode: [DXGI_ERROR_INVALID_CALL/InvalidCall], Message: [The application made a call that is invalid.", "DXGI_ERROR_INVALID_CALL", "application_error"),
    ];
    let mut bad = Vec::new();
    for (source, text, name, category) in cases {
        let v = explain_text(text, &m);
        match v.first() {
            Some(x) if x.name.starts_with(name) && x.category.as_str() == *category => {}
            Some(x) => bad.push(format!(
                "{source}: got {} ({}), want {name} ({category})",
                x.name,
                x.category.as_str()
            )),
            None => bad.push(format!("{source}: no match")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The codes alone, as people ask about them.
    for (code, name) in [
        ("VK_ERROR_DEVICE_LOST", "VK_ERROR_DEVICE_LOST"),
        ("DXGI_ERROR_DEVICE_HUNG", "DXGI_ERROR_DEVICE_HUNG"),
        ("0x887A0006", "DXGI_ERROR_DEVICE_HUNG"),
        ("0x88760868", "D3DERR_DEVICELOST"),
        ("VkResult -4", "VK_ERROR_DEVICE_LOST"),
        ("NV_ENC_ERR_INVALID_VERSION", "NV_ENC_ERR_INVALID_VERSION"),
    ] {
        let v = explain_text(code, &m);
        assert!(
            v.first().is_some_and(|x| x.name.starts_with(name)),
            "{code}: {:?}",
            v.iter().map(|x| &x.name).collect::<Vec<_>>()
        );
    }
}

/// Text that holds the APIs' words or numbers without their context is not one of their codes:
/// `vk` in prose, a negative number, a hexadecimal address or another HRESULT, Vulkan named
/// beside an ordinary figure.
#[test]
fn the_graphics_api_codes_leave_ordinary_text_alone() {
    let m = Matrix::embedded().unwrap();
    for t in [
        "I use vk -4 as a shortcut in my editor",
        "temperature dropped to -4 degrees",
        "Vulkan 1.3.275 instance created, 2 physical devices, error count 0",
        "pointer 0x00007ff6887a0005 in module game.exe",
        "HRESULT 0x80004005 (E_FAIL)",
        "checksum 887a0005 ok",
        "dxgi.dll loaded at 0x887a00ff",
        "vkCreateInstance succeeded, VkResult 0",
        "nvenc : Opened Encode Session (API ver 12.1)",
        "nvenc : m_pEncodeAPI->nvEncGetEncodeGUIDCount: 3.",
        "[h264_nvenc @ 0x55d] Using 2 B-frames (4 references)",
    ] {
        let v = explain_text(t, &m);
        assert!(
            !v.iter().any(|x| x.key.starts_with("api:")),
            "{t:?}: {:?}",
            v.iter().map(|x| &x.name).collect::<Vec<_>>()
        );
    }
}

/// The codes among `ours` that `explain` reads `line` as.
fn read_as(line: &str, ours: &[&str], m: &Matrix) -> Vec<String> {
    explain_text(line, m)
        .iter()
        .filter(|x| ours.iter().any(|o| x.code == *o))
        .map(|x| x.code.to_string())
        .collect()
}
