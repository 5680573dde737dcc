#!/usr/bin/env bash
# Installs the real NVIDIA libraries the tests probe, from PyPI, into .venv-test (git-ignored):
#   - nvidia-cuda-runtime-cu12 and the CUDA 13 nvidia-cuda-runtime (a real libcudart each,
#     whose cudaRuntimeGetVersion needs no GPU), installed into a throwaway venv;
#   - kubernetes-validate, for the Kubernetes manifests in scripts/k8s;
#   - ptxas from nvidia-cuda-nvcc-cu12 (only that file is unpacked), to assemble the embedded PTX
#     kernels for every GPU target offline (tests/it/ptx.rs);
#   - libcudnn.so.9 with libcudnn_graph.so.9 and cudnn_version.h from nvidia-cudnn-cu12
#     (only those files are unpacked from the wheel), and a copy of libcudnn.so.9 alone, which
#     aborts in cudnnGetVersion: the probe must survive that.
#   - Windows files out of the PyPI win_amd64 wheels (scripts/wheel-files.py fetches single
#     members by HTTP range, about 4 MB in all) into .venv-test/win, laid out as a Windows
#     site-packages: cudart64_12.dll, cudnn64_9.dll with cudnn_graph64_9.dll, their dist-info,
#     and torch 2.11.0's version.py and METADATA from PyPI's (CPU-only) Windows wheel; and
#     TensorFlow 2.10.0's build_info.py and METADATA from its Windows wheel into .venv-test/win-tf.
#   - the headers the knowledge generators read (scripts/knowledge/inputs.lock) into
#     .knowledge-inputs/.
# Safe to run again: it does nothing when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${GPUDOCTOR_TEST_VENV:-.venv-test}
CUDART12=nvidia-cuda-runtime-cu12==12.9.79
CUDART13=nvidia-cuda-runtime==13.0.96
CUDNN=nvidia-cudnn-cu12==9.1.0.70
NVCC=nvidia-cuda-nvcc-cu12==12.9.86
# Validates the Kubernetes manifests in scripts/k8s offline (it bundles the API schemas).
K8S_VALIDATE=kubernetes-validate==1.37.0
PY=${PYTHON:-python3}

# The knowledge generators' pinned inputs (scripts/knowledge/inputs.lock: 16 files out of 13
# PyPI wheels, read by HTTP range: about 2 MB transferred, 16 s once, and 5.6 MB on disk in
# .knowledge-inputs/), for the test that the committed knowledge/ is the generators' output.
# Each file is checked by sha256; a no-op when all are present. Apart from the venv's stamp so
# that a venv set up before it still gets them.
"$PY" scripts/knowledge/inputs.py --fetch

# uv, for the Python environment-kind tests (issue 31): only its binary, out of PyPI's wheel
# (uv-<version>.data/scripts/uv), into $VENV/bin/uv. Added apart from the stamp so that an
# existing .venv-test gains it without being rebuilt.
UV=uv==0.13.9
install_uv() {
  [ -x "$VENV/bin/uv" ] && return 0
  local d
  d=$(mktemp -d)
  "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: "$UV" -d "$d"
  "$PY" - "$d" "$VENV/bin/uv" <<'PYEOF'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/uv-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/uv"))
    open(sys.argv[2], "wb").write(z.read(name))
PYEOF
  chmod +x "$VENV/bin/uv"
  rm -rf "$d"
}

stamp="$VENV/.gpudoctor-test-setup-v5"
if [ -f "$stamp" ]; then
  install_uv
  exit 0
fi
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --only-binary=:all: "$CUDART12" "$CUDART13"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$K8S_VALIDATE"

# cuDNN: download the wheel (pip caches it) and unpack only the files the tests need.
dl=$(mktemp -d)
trap 'rm -rf "$dl"' EXIT
"$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --python-version 3.11 -d "$dl" "$CUDNN"
"$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --python-version 3.11 -d "$dl" "$NVCC"
whl=$(ls "$dl"/nvidia_cudnn_cu12-*.whl)
nvcc_whl=$(ls "$dl"/nvidia_cuda_nvcc_cu12-*.whl)
"$VENV/bin/python" - "$whl" "$VENV" "$nvcc_whl" <<'PYEOF'
import sys, zipfile, os
whl, venv, nvcc_whl = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(nvcc_whl) as z:
    os.makedirs(os.path.join(venv, "nvcc/bin"), exist_ok=True)
    out = os.path.join(venv, "nvcc/bin/ptxas")
    with open(out, "wb") as f:
        f.write(z.read("nvidia/cuda_nvcc/bin/ptxas"))
    os.chmod(out, 0o755)
want = {
    "nvidia/cudnn/lib/libcudnn.so.9": ["cudnn9/lib", "cudnn9-broken/lib"],
    "nvidia/cudnn/lib/libcudnn_graph.so.9": ["cudnn9/lib"],
    "nvidia/cudnn/include/cudnn_version.h": ["cudnn9/include", "cudnn9-broken/include"],
}
with zipfile.ZipFile(whl) as z:
    for member, dests in want.items():
        data = z.read(member)
        for d in dests:
            out = os.path.join(venv, d)
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, os.path.basename(member)), "wb") as f:
                f.write(data)
PYEOF
# Windows files, laid out as a site-packages (the tests copy it under a Windows Python prefix).
win="$VENV/win"
rm -rf "$win"
wf() { "$PY" scripts/wheel-files.py "$@"; }
wf nvidia-cuda-runtime-cu12==12.9.79 win_amd64 \
  nvidia/cuda_runtime/bin/cudart64_12.dll="$win/nvidia/cuda_runtime/bin/cudart64_12.dll" \
  nvidia_cuda_runtime_cu12-12.9.79.dist-info/METADATA="$win/nvidia_cuda_runtime_cu12-12.9.79.dist-info/METADATA"
wf nvidia-cudnn-cu12==9.1.0.70 win_amd64 \
  nvidia/cudnn/bin/cudnn64_9.dll="$win/nvidia/cudnn/bin/cudnn64_9.dll" \
  nvidia/cudnn/bin/cudnn_graph64_9.dll="$win/nvidia/cudnn/bin/cudnn_graph64_9.dll" \
  nvidia/cudnn/include/cudnn_version.h="$win/nvidia/cudnn/include/cudnn_version.h" \
  nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA="$win/nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA"
wf torch==2.11.0 cp311-cp311-win_amd64 \
  torch/version.py="$win/torch/version.py" \
  torch-2.11.0.dist-info/METADATA="$win/torch-2.11.0.dist-info/METADATA"
# TensorFlow 2.10.0, the last release with GPU support on native Windows, as its Windows wheel
# has it (build_info.py names its CUDA and cuDNN as DLL suffixes), in a site-packages of its own.
wintf="$VENV/win-tf"
rm -rf "$wintf"
wf tensorflow==2.10.0 cp310-cp310-win_amd64 \
  tensorflow/python/platform/build_info.py="$wintf/tensorflow/python/platform/build_info.py" \
  tensorflow-2.10.0.dist-info/METADATA="$wintf/tensorflow-2.10.0.dist-info/METADATA"
install_uv
date -u > "$stamp"
echo "test setup: $VENV ready"
