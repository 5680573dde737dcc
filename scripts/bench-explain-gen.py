#!/usr/bin/env python3
"""Writes a log shaped like a real one, for scripts/bench-explain.sh.

    scripts/bench-explain-gen.py SHAPE PATH MB

Prints the key phrase of the error near the end of the log (what `grep -c -F` looks for).
Every shape is ordinary output repeated to the size asked, then a real error near the end.
Where each line shape comes from:

- pytorch: a training loop printing tensors; PyTorch's tensor repr puts
  `device='cuda:0'` after the value of a tensor not on the default device
  (pytorch/pytorch torch/_tensor_str.py, `_str_intern`, "device=" suffix). The error is the
  caching allocator's OOM text (c10/cuda/CUDACachingAllocator.cpp, "CUDA out of memory. Tried to
  allocate ...").
- nccl: `NCCL_DEBUG=INFO` output. Prefix "%s:%d:%d " (host:pid:tid) then "[%d] NCCL INFO %s" and
  "[%d] %s:%d (%s) NCCL WARN %s" (NVIDIA/nccl src/debug.cc @ 5067397c, ncclDebugLog); messages
  from src/transport/p2p.cc ("Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s%s%s"),
  src/init.cc ("%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init
  COMPLETE"), src/transport/net.cc ("... [send] via NET/%s/%d"), and the WARN
  "Cuda failure '%s'" (src/include/checks.h).
- tqdm: progress bars redrawn with '\\r' and no newline until the bar closes: very long
  "lines" (one of them about half the file). Bar format '{l_bar}{bar}| {n_fmt}/{total_fmt}
  [{elapsed}<{remaining}, {rate_fmt}{postfix}]' with l_bar '{desc}: {percentage:3.0f}%|'
  (tqdm/tqdm tqdm/std.py, format_meter). The traceback follows the last redraw on the same
  line, as `python train.py > log 2>&1` writes it.
- vllm: vLLM's logger, "%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s" with
  dates "%m-%d %H:%M:%S" (vllm-project/vllm vllm/logger.py); the periodic stats line of
  vllm/engine/metrics.py ("Avg prompt throughput: ... GPU KV cache usage: ...%"), the request
  log of vllm/entrypoints/logger.py ("Received request ...: prompt: ..., params:
  SamplingParams(...)"), uvicorn's access log ('%s - "%s %s HTTP/%s" %d').
- hf: the Hugging Face Trainer: its tqdm bar on '\\r' and the dict of metrics it prints at each
  logging step ({'loss': ..., 'grad_norm': ..., 'learning_rate': ..., 'epoch': ...};
  huggingface/transformers src/transformers/trainer_callback.py, ProgressCallback.on_log).
- journal: `journalctl -k` ("%b %d %H:%M:%S host kernel: msg", journalctl's short format)
  with many NVRM lines: the module banner ("NVRM: loading NVIDIA UNIX Open Kernel Module for
  x86_64 ..."), "NVRM: GPU at PCI:...: GPU-<uuid>", "NVRM: GPU Board Serial Number: ...",
  nvidia-nvlink and nvidia-uvm load lines (NVIDIA/open-gpu-kernel-modules
  kernel-open/nvidia/nv.c, nvlink_linux.c, nvidia-uvm/uvm.c), among ordinary kernel lines;
  the error is an Xid 79 ("NVRM: Xid (PCI:...): 79, ... GPU has fallen off the bus.";
  https://docs.nvidia.com/deploy/xid-errors/index.html).
- plain: the earlier benchmark log: training lines that never say cuda, GPU or memory, with error
  lines mixed in.
"""
import random
import sys

BLOCK = 4 << 20


def pytorch(r):
    out, i = [], 0
    while sum(map(len, out)) < BLOCK:
        i += 1
        loss = 2.3 - (i % 1000) / 600 + r.random() / 50
        k = i % 7
        if k == 0:
            out.append(f"[2026-11-25 10:{i // 60 % 60:02d}:{i % 60:02d},{i % 1000:03d}][train][INFO] - epoch 3 step {i} "
                       f"loss=tensor({loss:.4f}, device='cuda:0', grad_fn=<NllLossBackward0>) lr=3.0e-04\n")
        elif k == 1:
            out.append(f"step {i}: logits tensor([[ 0.1234, -1.2034,  0.5531,  2.0041]], device='cuda:0') "
                       f"labels tensor([3], device='cuda:0')\n")
        elif k == 2:
            out.append(f"[rank0] step {i} max memory allocated on cuda:0: {20 + i % 9}.{i % 97:02d} GiB, "
                       f"reserved {30 + i % 5}.00 GiB\n")
        elif k == 3:
            out.append(f"grad_norm=tensor({1 + (i % 13) / 10:.4f}, device='cuda:0') tokens/s={41000 + i % 777} device=cuda:0\n")
        elif k == 4:
            out.append(f"Epoch 3 [{i}/500000] acc=tensor(0.{i % 9999:04d}, device='cuda:0') "
                       f"time 0.{i % 400:03d}s data 0.002s on cuda:0\n")
        elif k == 5:
            out.append(f"moving batch {i} to cuda:0 (input_ids torch.Size([8, 2048]), attention_mask torch.Size([8, 2048]))\n")
        else:
            out.append(f"eval step {i}: val_loss=tensor({loss + 0.1:.4f}, device='cuda:0') "
                       f"perplexity=tensor({2.7 ** loss:.3f}, device='cuda:0')\n")
    tail = ("Traceback (most recent call last):\n"
            '  File "/workspace/train.py", line 212, in <module>\n'
            "    loss.backward()\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 79.10 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process "
            "has 77.97 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and "
            "1.85 GiB is reserved by PyTorch but unallocated.\n")
    return out, tail, "CUDA out of memory"


def nccl(r):
    out, i = [], 0
    host = "gpu-node-07"
    while sum(map(len, out)) < BLOCK:
        i += 1
        pid = 41230 + i % 8
        dev = i % 8
        p = f"{host}:{pid}:{pid + 57} [{dev}] NCCL INFO "
        k = i % 9
        if k == 0:
            out.append(p + f"Channel {i % 32:02d}/0 : {dev}[{dev}] -> {(dev + 1) % 8}[{(dev + 1) % 8}] via P2P/CUMEM/read\n")
        elif k == 1:
            out.append(p + f"Channel {i % 32:02d}/1 : {dev}[{dev}] -> {(dev + 8) % 16}[{dev}] [send] via NET/IB/{dev}/GDRDMA\n")
        elif k == 2:
            out.append(p + f"comm 0x55d3{i % 65536:04x}c0 rank {dev} nranks 16 cudaDev {dev} nvmlDev {dev} "
                       f"busId {dev + 1}8000 commId 0x{r.getrandbits(64):016x} - Init COMPLETE\n")
        elif k == 3:
            out.append(p + f"Setting affinity for GPU {dev} to ffff,ffffffff,00000000,0000ffff,ffffffff\n")
        elif k == 4:
            out.append(p + "NVLS multicast support is available on dev " + str(dev) + " (NVLink SHARP)\n")
        elif k == 5:
            out.append(p + f"cudaDriverVersion 12040\n")
        elif k == 6:
            out.append(p + f"Allocated {4194304 + i % 4096} bytes of device memory for NVLink buffers on GPU {dev}\n")
        elif k == 7:
            out.append(p + f"P2P Chunksize set to 524288\n")
        else:
            out.append(p + f"Connected all rings, use ring PXN 0 GDR 1\n")
    tail = (f"{host}:41231:41288 [1] transport/p2p.cc:275 (p2pMap) NCCL WARN Cuda failure 'out of memory'\n"
            f"{host}:41231:41288 [1] NCCL INFO transport/p2p.cc:331 -> 1\n")
    return out, tail, "NCCL WARN"


def bar(desc, n, total, width=10):
    frac = n / total
    full = int(frac * width)
    rest = frac * width - full
    parts = " ▏▎▍▌▋▊▉"
    b = "█" * full + (parts[int(rest * 8)] if full < width else "") + " " * (width - full - 1)
    b = b[:width]
    el = n // 5
    rem = (total - n) // 5
    return (f"{desc}: {frac * 100:3.0f}%|{b}| {n}/{total} [{el // 60:02d}:{el % 60:02d}<{rem // 60:02d}:{rem % 60:02d}, "
            f" 5.{n % 100:02d}it/s, loss={0.5 + (n % 97) / 1000:.3f}, v_num=0]")


def tqdm(r):
    # The block is one bar's redraws; the script below makes one line of half the file.
    out, n = [], 0
    while sum(map(len, out)) < BLOCK:
        n += 1
        out.append("\r" + bar("Epoch 3", n % 1000000, 1000000))
    tail = ("Traceback (most recent call last):\n"
            '  File "/workspace/train.py", line 98, in <module>\n'
            "    out = model(x)\n"
            "RuntimeError: CUDA error: device-side assert triggered\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the "
            "stacktrace below might be incorrect.\n")
    return out, tail, "device-side assert triggered"


def vllm(r):
    out, i = [], 0
    while sum(map(len, out)) < BLOCK:
        i += 1
        t = f"11-25 14:{i // 60 % 60:02d}:{i % 60:02d}"
        k = i % 4
        if k == 0:
            out.append(f"INFO {t} metrics.py:351] Avg prompt throughput: {500 + i % 300:.1f} tokens/s, Avg generation "
                       f"throughput: {1200 + i % 97:.1f} tokens/s, Running: {i % 30} reqs, Swapped: 0 reqs, Pending: 0 "
                       f"reqs, GPU KV cache usage: {i % 100}.{i % 10}%, CPU KV cache usage: 0.0%.\n")
        elif k == 1:
            out.append(f"INFO {t} logger.py:37] Received request cmpl-{r.getrandbits(64):016x}-0: prompt: 'Summarise "
                       f"the following article about GPUs in three sentences.', params: SamplingParams(n=1, "
                       f"presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, temperature=0.7, "
                       f"top_p=1.0, top_k=-1, min_p=0.0, seed=None, stop=[], max_tokens=256), prompt_token_ids: "
                       f"[1, 6174, 3034, 278, {i % 30000}], lora_request: None, prompt_adapter_request: None.\n")
        elif k == 2:
            out.append(f"INFO:     10.0.{i % 256}.{i % 200}:{40000 + i % 20000} - \"POST /v1/completions HTTP/1.1\" 200 OK\n")
        else:
            out.append(f"INFO {t} engine.py:275] Added request cmpl-{r.getrandbits(48):012x}-0.\n")
    tail = ("ERROR 11-25 15:02:11 async_llm_engine.py:65] Engine background task failed\n"
            "ERROR 11-25 15:02:11 async_llm_engine.py:65] RuntimeError: CUDA error: an illegal memory access was encountered\n")
    return out, tail, "illegal memory access"


def hf(r):
    out, i = [], 0
    while sum(map(len, out)) < BLOCK:
        i += 1
        if i % 50 == 0:
            out.append(f"\n{{'loss': {0.5 + (i % 97) / 1000:.4f}, 'grad_norm': {1 + (i % 13) / 10:.4f}, "
                       f"'learning_rate': {5e-05 * (1 - (i % 10000) / 10000):.4e}, 'epoch': {(i % 10000) / 10000:.2f}}}\n")
        out.append("\r" + bar("", i % 10000, 10000)[2:])
    tail = ("\nTraceback (most recent call last):\n"
            '  File "/workspace/run_clm.py", line 655, in <module>\n'
            "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n")
    return out, tail, "CUBLAS_STATUS_ALLOC_FAILED"


def journal(r):
    out, i = [], 0
    while sum(map(len, out)) < BLOCK:
        i += 1
        t = f"Nov 25 {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d} gpu-node-07 kernel: "
        bus = f"0000:{(i % 8) * 16 + 24:02x}:00"
        k = i % 10
        if k == 0:
            out.append(t + "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
                       "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n")
        elif k == 1:
            out.append(t + f"NVRM: GPU at PCI:{bus}: GPU-{r.getrandbits(32):08x}-1b2c-3d4e-5f60-{r.getrandbits(48):012x}\n")
        elif k == 2:
            out.append(t + f"NVRM: GPU Board Serial Number: 1321{r.getrandbits(32) % 100000000:09d}\n")
        elif k == 3:
            out.append(t + "nvidia-nvlink: Nvlink Core is being initialized, major device number 509\n")
        elif k == 4:
            out.append(t + "nvidia-uvm: Loaded the UVM driver, major device number 507.\n")
        elif k == 5:
            out.append(t + f"nvidia {bus}.0: enabling device (0000 -> 0002)\n")
        elif k == 6:
            out.append(t + f"audit: type=1400 audit({1764000000 + i}.123:{i}): apparmor=\"STATUS\" operation=\"profile_load\" "
                       "profile=\"unconfined\" name=\"nvidia_modprobe\" pid=1412 comm=\"apparmor_parser\"\n")
        elif k == 7:
            out.append(t + f"mlx5_core 0000:{(i % 4) * 16 + 40:02x}:00.0: Port module event: module 0, Cable plugged\n")
        elif k == 8:
            out.append(t + "NVRM: GPU at PCI:" + bus + ": persistence mode enabled\n")
        else:
            out.append(t + f"EXT4-fs (nvme0n1p2): mounted filesystem {r.getrandbits(32):08x} r/w with ordered data mode.\n")
    tail = ("Nov 25 23:59:58 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
            "GPU has fallen off the bus.\n"
            "Nov 25 23:59:58 gpu-node-07 kernel: NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n")
    return out, tail, "fallen off the bus"


def plain(r):
    lines = []
    for i in range(20000):
        lines.append(f"2026-11-21 10:{i % 60:02d}:{i % 60:02d} INFO train.py:212 epoch 3 step {i} "
                     f"loss {0.5 + (i % 97) / 1000:.4f} lr 3.0e-04 grad_norm {1 + (i % 13) / 10:.2f} "
                     f"tokens/s {41000 + i % 777}\n")
        if i % 5000 == 17:
            lines.append("[ 9123.447] NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n")
        if i % 5000 == 2500:
            lines.append("RuntimeError: CUDA error: an illegal memory access was encountered\n")
        if i % 10000 == 4000:
            lines.append("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.12 GiB is free.\n")
        if i % 20000 == 9000:
            lines.append("Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0.\n")
    return lines, "", "Xid"


SHAPES = {"pytorch": pytorch, "nccl": nccl, "tqdm": tqdm, "vllm": vllm, "hf": hf, "journal": journal, "plain": plain}


def main():
    shape, path, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    r = random.Random(30)
    lines, tail, key = SHAPES[shape](r)
    block = "".join(lines).encode()
    target = int(mb * (1 << 20))
    with open(path, "wb") as f:
        written = 0
        while written + len(block) <= target - len(tail) - 4096 or written == 0:
            f.write(block)
            written += len(block)
        if shape == "tqdm":
            # The bar closes: newline; then one more bar that is still running when the error comes.
            f.write(b"\n")
            f.write(block[: max(0, min(len(block), target - written - 8192))])
        # A few ordinary lines after the error would be usual; the error is near the end.
        f.write(tail.encode())
        if shape not in ("tqdm", "hf"):
            f.write(block[:2048].rsplit(b"\n", 1)[0] + b"\n")
    print(key)


if __name__ == "__main__":
    main()
