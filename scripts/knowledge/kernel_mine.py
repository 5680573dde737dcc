#!/usr/bin/env python3
"""Mine the NVIDIA kernel driver's own source for the facts gpudoctor reads in kernel logs.

    kernel_mine.py extract [--check]   the driver's source -> scripts/knowledge/kernel-extract.json
    kernel_mine.py [mine] [--check]    scripts/knowledge/kernel-extract.json -> knowledge/mined/

Two steps, so that the staleness check runs in CI, which cannot reach GitHub:

- `extract` reads a snapshot of NVIDIA/open-gpu-kernel-modules (a bare git directory or a
  checkout) named by KNOWLEDGE_SRC, else the mirror at
  /work/.mirror/NVIDIA+open-gpu-kernel-modules/repo, and writes the pinned extract: the commit,
  the sha256 of every source file the miner reads, and exactly the text it reads from them (each
  printf call of an error/warning level from the start of its line to the end of its format
  argument, with its first line number; nverror.h up to ROBUST_CHANNEL_LAST_ERROR; version.mk's
  NVIDIA_VERSION line). `extract --check` (where the snapshot is) fails when the committed extract
  differs from what the snapshot gives, so a changed file (its sha256) or a changed rule is caught.
- `mine` reads only the extract and writes
  - knowledge/mined/kernel-xid.json: every `#define NAME (N)` of
    src/common/sdk/nvidia/inc/nverror.h (the Xid numbers and the names the driver gives them);
  - knowledge/mined/kernel-nvrm.json: every error/warning printf of the driver that reaches the
    kernel log (`NV_PRINTF(LEVEL_ERROR|LEVEL_WARNING, ...)`, `nv_printf(NV_DBG_ERRORS|
    NV_DBG_WARNINGS, ...)`, `NV_DEV_PRINTF(...)`, `NV_ASSERT_PRINTF(LEVEL_ERROR, ...)`, and the
    kernel's `printk(KERN_ERR|KERN_WARNING ...)` that the Linux layer calls directly) under the
    folders below, as a format string split into its literal pieces, with file:line.
  Each names the commit and the driver version (version.mk) it was mined from. `mine --check`
  fails on any difference from the committed files; it runs everywhere (tests/it/knowledge_kernel.rs).
"""
import hashlib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIRROR = "/work/.mirror/NVIDIA+open-gpu-kernel-modules/repo"
REPO = "https://github.com/NVIDIA/open-gpu-kernel-modules"
EXTRACT = os.path.join(ROOT, "scripts", "knowledge", "kernel-extract.json")
XID_HEADER = "src/common/sdk/nvidia/inc/nverror.h"
# RmInitAdapter's failure codes: the init stage (osinit.c's rm_init_status) and the NV_STATUS.
STATUS_HEADER = "src/common/sdk/nvidia/inc/nvstatuscodes.h"
RM_INIT_FILE = "src/nvidia/arch/nvalloc/unix/src/osinit.c"
# Where the messages a person sees in the kernel log are printed (probe, init, BAR, API mismatch;
# GSP and FSP boot and health; the RM's OS layer; the assertion helpers; memory, bus, PCIe and
# NVLink). NV_PRINTF(LEVEL_ERROR) prints in release builds too, so these all reach the log.
FOLDERS = [
    "kernel-open/nvidia/",
    "src/nvidia/arch/nvalloc/unix/src/",
    "src/nvidia/src/kernel/gpu/gsp/",
    "src/nvidia/src/kernel/gpu/fsp/",
    "src/nvidia/src/kernel/gpu/rc/",
    "src/nvidia/src/libraries/utils/nvassert.c",
    # The subsystems whose faults people meet: memory (ECC, row remapping, page retirement),
    # the bus and the PCIe interface (BARs, link, AER), NVLink.
    "src/nvidia/src/kernel/gpu/mem_mgr/",
    "src/nvidia/src/kernel/gpu/mem_sys/",
    "src/nvidia/src/kernel/gpu/bus/",
    "src/nvidia/src/kernel/gpu/bif/",
    "src/nvidia/src/kernel/gpu/nvlink/",
    # The per-architecture HALs' checks of what the GPU answers ("Possible bad register read",
    # the sanity check of a register read that came back as an error code).
    "src/nvidia/src/kernel/gpu/arch/",
    # The display side: nvidia-drm's NV_DRM_LOG_ERR/WARN and nvidia-modeset's printk.
    "kernel-open/nvidia-drm/",
    "kernel-open/nvidia-modeset/",
]
CALLS = ("NV_PRINTF", "nv_printf", "NV_DEV_PRINTF", "NV_DEV_PRINTF_STATUS", "NV_ASSERT_PRINTF")
LEVELS = {
    "LEVEL_ERROR": "error",
    "LEVEL_WARNING": "warning",
    "NV_DBG_ERRORS": "error",
    "NV_DBG_WARNINGS": "warning",
    "KERN_ERR": "error",
    "KERN_WARNING": "warning",
    "ERR": "error",
    "WARN": "warning",
}
CALL_RE = re.compile(r"\b(" + "|".join(CALLS) + r")\s*\(\s*(\w+)\s*,")
# The kernel's own printk, which the driver's Linux layer calls directly for some messages
# ("nvidia-nvswitch: Version mismatch, kernel version %s user version %s"): its level is a
# KERN_* prefix of the format, with no comma after it.
PRINTK_RE = re.compile(r"\b(printk)\s*\(\s*(KERN_[A-Z]+)\b")
# nvidia-drm's logging macros (kernel-open/nvidia-drm/nvidia-drm-priv.h): the level is in the
# name; NV_DRM_DEV_LOG_* take the device first. They print "[nvidia-drm] " (and "[GPU ID 0x%08x] "
# for a device) before the format, through DRM_ERROR / DRM_WARN.
DRM_RE = re.compile(r"\b(NV_DRM_(?:DEV_)?LOG)_(ERR|WARN)\s*\(")
SPEC_RE = re.compile(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t|L|q|I64)?[diouxXcspfeEgGn%]|%\?")


class Src:
    def __init__(self, where):
        self.where = where
        self.bare = not os.path.isdir(os.path.join(where, ".git")) and os.path.isdir(
            os.path.join(where, "objects"))
        self.gitdir = where if self.bare else os.path.join(where, ".git")

    def raw(self, *args):
        return subprocess.run(["git", "--git-dir", self.gitdir, *args], check=True,
                              capture_output=True, timeout=120).stdout

    def git(self, *args):
        return self.raw(*args).decode("utf-8", "replace")

    def commit(self):
        return self.git("rev-parse", "HEAD").strip()

    def files(self, under):
        return [f for f in self.git("ls-tree", "-r", "--name-only", "HEAD", "--", under).split("\n")
                if f.endswith((".c", ".h"))]

    def read(self, path):
        return self.git("show", "HEAD:" + path)

    def sha256(self, path):
        """The sha256 of the file's bytes at HEAD."""
        return hashlib.sha256(self.raw("show", "HEAD:" + path)).hexdigest()


def c_format(text, i):
    """The format argument starting at text[i]: adjacent string literals joined, a macro between
    them (a format fragment like NvP64_fmt) as a hole "%?". Returns (format, ok)."""
    out = []
    n = len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == '"':
            j = i + 1
            buf = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    e = text[j + 1]
                    buf.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(e, ""))
                    j += 2
                else:
                    buf.append(text[j])
                    j += 1
            out.append("".join(buf))
            i = j + 1
        elif c.isalpha() or c == "_":
            m = re.match(r"\w+", text[i:])
            word = m.group(0)
            i += len(word)
            if word in ("NV_PRINTF_ADD_PREFIX",):
                continue
            # A format macro: "%" NvU64_fmtu is one conversion, a lone macro a hole of its own.
            if out and out[-1].endswith("%"):
                out[-1] = out[-1][:-1]
            out.append("%?")
        elif c == "/" and text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                break
        elif c == "/" and text.startswith("/*", i):
            i = text.find("*/", i) + 2
        elif c in ",)":
            break
        elif c == "(":
            # NV_PRINTF_ADD_PREFIX("...") and the like: read inside.
            i += 1
        else:
            return "".join(out), False
    fmt = "".join(out)
    return fmt, bool(fmt)


def pieces(fmt):
    """The literal pieces of a printf format: the text between its conversions, trimmed."""
    out = []
    for line in fmt.split("\n"):
        for p in SPEC_RE.split(line.replace("%%", "\x00")):
            p = p.replace("\x00", "%").strip()
            if p.startswith("NVRM:"):
                p = p[5:].strip()
            if p:
                out.append(p)
    return out


def format_end(text, i):
    """Where c_format, started at text[i], stops reading."""
    n = len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c == "(":
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            i = j + 1
        elif c.isalpha() or c == "_":
            i += len(re.match(r"\w+", text[i:]).group(0))
        elif c == "/" and text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                return n
        elif c == "/" and text.startswith("/*", i):
            i = text.find("*/", i) + 2
        else:
            return i
    return n


def calls(text, first_line=1):
    """Every error/warning printf call in text: (line, match, index where its format starts)."""
    found = sorted([*CALL_RE.finditer(text), *PRINTK_RE.finditer(text), *DRM_RE.finditer(text)],
                   key=lambda m: m.start())
    for m in found:
        call, level = m.group(1), m.group(2)
        if level not in LEVELS:
            continue
        # A macro's own definition (nvidia-drm-priv.h's NV_DRM_DEV_LOG_ERR calls NV_DRM_LOG_ERR)
        # is no message.
        start = text.rfind("\n", 0, m.start()) + 1
        prev = text[text.rfind("\n", 0, max(0, start - 1)) + 1:max(0, start - 1)]
        if text[start:m.start()].lstrip().startswith("#define") or prev.rstrip().endswith("\\"):
            continue
        i = m.end()
        if call == "NV_DRM_DEV_LOG":
            j = text.find(",", i)
            i = j + 1 if j >= 0 else len(text)
        if call in ("NV_DEV_PRINTF", "NV_DEV_PRINTF_STATUS"):
            # NV_DEV_PRINTF(level, nv, fmt, ...); _STATUS has a status before fmt.
            skip = 1 if call == "NV_DEV_PRINTF" else 2
            for _ in range(skip):
                j = text.find(",", i)
                i = j + 1 if j >= 0 else len(text)
        yield first_line + text.count("\n", 0, m.start()), m, i


def mine_regions(path, regions, seen):
    """The entries of one file from its regions [(first line, text)]."""
    for first, text in regions:
        for line, m, i in calls(text, first):
            fmt, ok = c_format(text, i)
            if not ok:
                continue
            fmt = fmt.rstrip("\n")
            ps = pieces(fmt)
            if not ps:
                continue
            seen[(path, line)] = {
                "file": path,
                "line": line,
                "call": m.group(1),
                "level": LEVELS[m.group(2)],
                "format": fmt,
                "pieces": ps,
            }


def regions_of(text):
    """The parts of a source file the miner reads: each call's lines, from the start of its line
    to the end of the line where its format ends, overlapping parts merged."""
    spans = []
    for _, m, i in calls(text):
        a = text.rfind("\n", 0, m.start()) + 1
        b = text.find("\n", format_end(text, i))
        spans.append((a, len(text) if b < 0 else b))
    spans.sort()
    merged = []
    for a, b in spans:
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(text.count("\n", 0, a) + 1, text[a:b]) for a, b in merged]


def xid_lines(text):
    """nverror.h up to (and with) its ROBUST_CHANNEL_LAST_ERROR line."""
    out = []
    for line in text.split("\n"):
        out.append(line)
        if re.match(r"#define\s+ROBUST_CHANNEL_LAST_ERROR\b", line):
            break
    return "\n".join(out)


def mine_xid(text):
    out = []
    # The Xid block ends at ROBUST_CHANNEL_LAST_ERROR; later defines are other enums.
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"#define\s+(\w+)\s+\((\d+)\)\s*$", line.rstrip())
        if m and m.group(1) == "ROBUST_CHANNEL_LAST_ERROR":
            break
        if m:
            out.append({"xid": int(m.group(2)), "name": m.group(1), "line": n})
    return sorted(out, key=lambda e: (e["xid"], e["line"]))


def rm_init_lines(text):
    """osinit.c's rm_init_status enum (RmInitAdapter's first code), with line numbers."""
    out, inside = [], False
    for n, line in enumerate(text.split("\n"), 1):
        if "RM_INIT_OK" in line:
            inside = True
        if inside:
            out.append([n, line])
            if "} rm_init_status;" in line:
                break
    return out


def mine_rm_init(ex):
    """RmInitAdapter's codes, "RmInitAdapter failed! (0x%x:0x%x:%d)" (osinit.c): the init stage
    (rm_init_status, numbered as C numbers an enum), the NV_STATUS (nvstatuscodes.h) and the line."""
    stages, value = [], -1
    for n, line in ex["rm_init_enum"]["lines"]:
        m = re.match(r"\s*(RM_\w+)\s*(?:=\s*(0x[0-9a-fA-F]+|\d+))?\s*,?", line)
        if not m:
            continue
        value = int(m.group(2), 0) if m.group(2) else value + 1
        stages.append({"code": value, "name": m.group(1), "line": n})
    status = []
    for n, line in ex["status_header"]["lines"]:
        m = re.match(r'NV_STATUS_CODE\((\w+),\s*(0x[0-9a-fA-F]+),\s*"([^"]*)"\)', line)
        if m:
            status.append({"code": int(m.group(2), 16), "name": m.group(1), "text": m.group(3),
                           "line": n})
    return {"init_status": stages, "nv_status": status}


def extract(src):
    """The pinned extract of the snapshot: everything `mine` reads, and the sha256 of each file."""
    files = []
    for folder in FOLDERS:
        for path in src.files(folder):
            text = src.read(path)
            files.append({
                "file": path,
                "sha256": src.sha256(path),
                "regions": [{"line": a, "text": t} for a, t in regions_of(text)],
            })
    xid = src.read(XID_HEADER)
    status = src.read(STATUS_HEADER)
    osinit = src.read(RM_INIT_FILE)
    ver = src.read("version.mk")
    vline = next((line for line in ver.split("\n") if line.startswith("NVIDIA_VERSION")), "")
    return {
        "about": "Generated by scripts/knowledge/kernel_mine.py extract (do not edit): the parts "
                 "of NVIDIA/open-gpu-kernel-modules that kernel_mine.py mine reads.",
        "repository": REPO,
        "commit": src.commit(),
        "folders": FOLDERS,
        "version_mk": {"sha256": src.sha256("version.mk"), "line": vline},
        "xid_header": {"file": XID_HEADER, "sha256": src.sha256(XID_HEADER), "text": xid_lines(xid)},
        "status_header": {"file": STATUS_HEADER, "sha256": src.sha256(STATUS_HEADER),
                          "lines": [[n, line] for n, line in enumerate(status.split("\n"), 1)
                                    if line.startswith("NV_STATUS_CODE(")]},
        "rm_init_enum": {"file": RM_INIT_FILE, "sha256": src.sha256(RM_INIT_FILE),
                         "lines": rm_init_lines(osinit)},
        "files": files,
    }


def mine(ex):
    head = {"repository": ex["repository"], "commit": ex["commit"],
            "version": ex["version_mk"]["line"].split("=", 1)[1].strip()
            if "=" in ex["version_mk"]["line"] else "?"}
    seen = {}
    for f in ex["files"]:
        mine_regions(f["file"], [(r["line"], r["text"]) for r in f["regions"]], seen)
    nvrm = [seen[k] for k in sorted(seen)]
    return {
        "kernel-xid.json": dict(head, header=XID_HEADER, entries=mine_xid(ex["xid_header"]["text"])),
        "kernel-nvrm.json": dict(head, folders=ex["folders"], entries=nvrm),
        "kernel-rm-init.json": dict(head, files=[RM_INIT_FILE, STATUS_HEADER],
                                    entries=[mine_rm_init(ex)]),
    }


def dumps(data):
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def write_or_check(path, text, check, what):
    if check:
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if old != text:
            print(f"kernel_mine --check: {os.path.relpath(path, ROOT)} differs from what {what} "
                  "gives", file=sys.stderr)
            return 1
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(path, ROOT)}")
    return 0


def main():
    args = sys.argv[1:]
    check = "--check" in args
    if "extract" in args:
        where = os.environ.get("KNOWLEDGE_SRC", MIRROR)
        if not os.path.isdir(where):
            print(f"kernel_mine extract: no source at {where} (set KNOWLEDGE_SRC)", file=sys.stderr)
            return 2
        ex = extract(Src(where))
        text = dumps(ex)
        n = sum(len(f["regions"]) for f in ex["files"])
        print(f"extract: {len(ex['files'])} files, {n} regions, {len(text)} bytes")
        return write_or_check(EXTRACT, text, check, "the snapshot at " + where)
    with open(EXTRACT, encoding="utf-8") as f:
        ex = json.load(f)
    bad = 0
    for name, data in mine(ex).items():
        bad |= write_or_check(os.path.join(ROOT, "knowledge", "mined", name), dumps(data), check,
                              "the pinned extract")
        print(f"{name}: {len(data['entries'])} entries")
    return bad


if __name__ == "__main__":
    sys.exit(main())
