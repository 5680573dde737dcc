#!/usr/bin/env python3
"""Mine the NVIDIA kernel driver's own source for the facts gpudoctor reads in kernel logs.

    kernel_mine.py [--check]

Reads a snapshot of NVIDIA/open-gpu-kernel-modules (a bare git directory or a checkout) named by
KNOWLEDGE_SRC, else the mirror at /work/.mirror/NVIDIA+open-gpu-kernel-modules/repo, and writes

- knowledge/mined/kernel-xid.json: every `#define NAME (N)` of
  src/common/sdk/nvidia/inc/nverror.h (the Xid numbers and the names the driver gives them);
- knowledge/mined/kernel-nvrm.json: every error/warning printf of the driver that reaches the
  kernel log (`NV_PRINTF(LEVEL_ERROR|LEVEL_WARNING, ...)`, `nv_printf(NV_DBG_ERRORS|
  NV_DBG_WARNINGS, ...)`, `NV_DEV_PRINTF(...)`, `NV_ASSERT_PRINTF(LEVEL_ERROR, ...)`) under the
  folders below, as a format string split into its literal pieces, with file:line.

Each file names the commit and the driver version (version.mk) it was mined from. `--check`
compares with the committed files and fails on any difference (run where the source is; CI has
no copy of it, so there only `kernel_build.py --check` runs).
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIRROR = "/work/.mirror/NVIDIA+open-gpu-kernel-modules/repo"
REPO = "https://github.com/NVIDIA/open-gpu-kernel-modules"

XID_HEADER = "src/common/sdk/nvidia/inc/nverror.h"
# Where the messages a person sees in the kernel log are printed (briefs: probe, init, BAR, API
# mismatch; GSP and FSP boot and health; the RM's OS layer; the assertion helpers).
FOLDERS = [
    "kernel-open/nvidia/",
    "src/nvidia/arch/nvalloc/unix/src/",
    "src/nvidia/src/kernel/gpu/gsp/",
    "src/nvidia/src/kernel/gpu/fsp/",
    "src/nvidia/src/kernel/gpu/rc/",
    "src/nvidia/src/libraries/utils/nvassert.c",
]
CALLS = ("NV_PRINTF", "nv_printf", "NV_DEV_PRINTF", "NV_DEV_PRINTF_STATUS", "NV_ASSERT_PRINTF")
LEVELS = {
    "LEVEL_ERROR": "error",
    "LEVEL_WARNING": "warning",
    "NV_DBG_ERRORS": "error",
    "NV_DBG_WARNINGS": "warning",
}
CALL_RE = re.compile(r"\b(" + "|".join(CALLS) + r")\s*\(\s*(\w+)\s*,")
SPEC_RE = re.compile(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t|L|q|I64)?[diouxXcspfeEgGn%]|%\?")


class Src:
    def __init__(self, where):
        self.where = where
        self.bare = not os.path.isdir(os.path.join(where, ".git")) and os.path.isdir(
            os.path.join(where, "objects"))
        self.gitdir = where if self.bare else os.path.join(where, ".git")

    def git(self, *args):
        return subprocess.run(["git", "--git-dir", self.gitdir, *args], check=True,
                              capture_output=True, timeout=120).stdout.decode("utf-8", "replace")

    def commit(self):
        return self.git("rev-parse", "HEAD").strip()

    def files(self, under):
        return [f for f in self.git("ls-tree", "-r", "--name-only", "HEAD", "--", under).split("\n")
                if f.endswith((".c", ".h"))]

    def read(self, path):
        return self.git("show", "HEAD:" + path)


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


def mine_nvrm(src):
    seen = {}
    for folder in FOLDERS:
        for path in src.files(folder):
            text = src.read(path)
            for m in CALL_RE.finditer(text):
                call, level = m.group(1), m.group(2)
                if level not in LEVELS:
                    continue
                i = m.end()
                if call in ("NV_DEV_PRINTF", "NV_DEV_PRINTF_STATUS"):
                    # NV_DEV_PRINTF(level, nv, fmt, ...); _STATUS has a status before fmt.
                    skip = 1 if call == "NV_DEV_PRINTF" else 2
                    for _ in range(skip):
                        i = text.index(",", i) + 1
                fmt, ok = c_format(text, i)
                if not ok:
                    continue
                line = text.count("\n", 0, m.start()) + 1
                fmt = fmt.rstrip("\n")
                ps = pieces(fmt)
                if not ps:
                    continue
                key = (path, line)
                seen[key] = {
                    "file": path,
                    "line": line,
                    "call": call,
                    "level": LEVELS[level],
                    "format": fmt,
                    "pieces": ps,
                }
    return [seen[k] for k in sorted(seen)]


def mine_xid(src):
    text = src.read(XID_HEADER)
    out = []
    # The Xid block ends at ROBUST_CHANNEL_LAST_ERROR; later defines are other enums.
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"#define\s+(\w+)\s+\((\d+)\)\s*$", line.rstrip())
        if m and m.group(1) == "ROBUST_CHANNEL_LAST_ERROR":
            break
        if m:
            out.append({"xid": int(m.group(2)), "name": m.group(1), "line": n})
    return sorted(out, key=lambda e: (e["xid"], e["line"]))


def version(src):
    for line in src.read("version.mk").split("\n"):
        if line.startswith("NVIDIA_VERSION"):
            return line.split("=", 1)[1].strip()
    return "?"


def main():
    check = "--check" in sys.argv[1:]
    where = os.environ.get("KNOWLEDGE_SRC", MIRROR)
    if not os.path.isdir(where):
        print(f"kernel_mine: no source at {where} (set KNOWLEDGE_SRC)", file=sys.stderr)
        return 2
    src = Src(where)
    head = {"repository": REPO, "commit": src.commit(), "version": version(src)}
    outs = {
        "kernel-xid.json": dict(head, header=XID_HEADER, entries=mine_xid(src)),
        "kernel-nvrm.json": dict(head, folders=FOLDERS, entries=mine_nvrm(src)),
    }
    bad = 0
    for name, data in outs.items():
        path = os.path.join(ROOT, "knowledge", "mined", name)
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        if check:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if old != text:
                print(f"kernel_mine --check: {path} differs from what the source gives",
                      file=sys.stderr)
                bad = 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"{name}: {len(data['entries'])} entries")
    return bad


if __name__ == "__main__":
    sys.exit(main())
