#!/usr/bin/env python3
"""Mine the Linux kernel's own source for the kernel-log lines gpudoctor reads (issue 30).

    linux_mine.py extract [--check]   Debian's linux-source packages -> scripts/knowledge/linux-extract.json
    linux_mine.py [build] [--check]   the extract + linux_families.yaml -> knowledge/mined/linux-printk.json
                                      and knowledge/linux-messages.yaml

Two steps, as kernel_mine.py does for the NVIDIA driver, so that CI needs neither the network nor
the 150 MB packages:

- `extract` reads the Debian packages pinned in scripts/knowledge/linux.lock (name, version, the
  .deb's sha256 as Debian's index gives it, and the source files read from its tarball) out of
  $LINUX_DEBS (default target/knowledge-inputs/linux/; fetch them with the `apt-get download`
  line the lock names), checks each .deb's sha256, and writes the pinned extract: per release,
  the sha256 of every source file it reads and exactly the text it reads (each printk-family
  call from the start of its line to the end of its format, and `#define NAME "text"` lines
  that a message is built from). `extract --check` fails when the packages give another extract.
- `build` reads only the extract and scripts/knowledge/linux_families.yaml (the families, cited,
  each with the mined formats it selects by file and text, its category, role, scope and fix)
  and writes knowledge/mined/linux-printk.json (every mined format: file, line per release,
  level, call, literal pieces) and knowledge/linux-messages.yaml (every selected format with its
  family; the families as the Rust reads them). A selector that selects nothing fails the build.
  `build --check` fails on any difference from the committed files (tests/it/knowledge_kernel.rs).
"""
import hashlib
import io
import json
import lzma
import os
import re
import subprocess
import sys
import tarfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from kernel_mine import c_format, format_end, pieces  # noqa: E402

LOCK = os.path.join(HERE, "linux.lock")
EXTRACT = os.path.join(HERE, "linux-extract.json")
FAMILIES = os.path.join(HERE, "linux_families.yaml")
MINED = os.path.join(ROOT, "knowledge", "mined", "linux-printk.json")
OUT = os.path.join(ROOT, "knowledge", "linux-messages.yaml")

LEVEL_WORDS = {
    "emerg": "emerg", "alert": "alert", "crit": "crit", "err": "err", "error": "err", "warn": "warning",
    "warning": "warning", "notice": "notice", "info": "info", "dbg": "debug", "debug": "debug",
}
# printk and its wrappers: pr_<level>, pci_<level>, dev_<level> (with _once / _ratelimited),
# nouveau's nvkm_<level>(subdev, ...), printk(KERN_<LEVEL> ...), panic(), WARN(cond, ...); the
# format is the first argument, the second for pci_/dev_/nvkm_ (the device) and WARN (the
# condition).
CALL_RE = re.compile(
    r"\b(?:(pr|pci|dev|nvkm)_(emerg|alert|crit|err|error|warn|warning|notice|info)(?:_once|_ratelimited)?"
    r"|(printk|printk_deferred|panic|WARN|WARN_ONCE|pci_printk|dev_printk|aer_printk|edac_mc_printk))\s*\(")
DEFINE_RE = re.compile(r'^#define\s+([A-Z][A-Z0-9_]*)\s+("(?:[^"\\]|\\.)*")\s*$', re.M)
KERN_RE = re.compile(r"\s*KERN_([A-Z]+)\b")


def skip_arg(text, i):
    """The index after the top-level comma that ends the argument starting at text[i]."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return n
            depth -= 1
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "," and depth == 0:
            return i + 1
        i += 1
    return n


def calls(text, first_line=1):
    """Every printk-family call in text: (line, call name, level, index where its format starts)."""
    for m in CALL_RE.finditer(text):
        i = m.end()
        if m.group(1):
            call = f"{m.group(1)}_{m.group(2)}"
            level = LEVEL_WORDS[m.group(2)]
            if m.group(1) in ("pci", "dev", "nvkm"):
                i = skip_arg(text, i)
        else:
            call = m.group(3)
            level = {"panic": "emerg", "WARN": "warning", "WARN_ONCE": "warning"}.get(call, "default")
            if call.startswith("WARN"):
                i = skip_arg(text, i)
            elif call == "edac_mc_printk":
                # edac_mc_printk(mci, KERN_<LEVEL>, fmt, ...)
                i = skip_arg(text, i)
            elif call.endswith("_printk"):
                # pci_printk(level, dev, fmt, ...): the level is a variable (the severity).
                i = skip_arg(text, skip_arg(text, i))
            k = KERN_RE.match(text, i)
            if k:
                level = LEVEL_WORDS.get(k.group(1).lower(), k.group(1).lower())
                i = k.end()
                if call == "edac_mc_printk":
                    i = text.index(",", i) + 1 if text[i:].lstrip().startswith(",") else i
        yield first_line + text.count("\n", 0, m.start()), call, level, i, m.start()


def regions_of(text):
    """The parts of a source file the miner reads: each call's lines (from the start of its line
    to the end of the line where its format ends) and each string #define, merged."""
    spans = []
    for _, _, _, i, start in calls(text):
        a = text.rfind("\n", 0, start) + 1
        b = text.find("\n", format_end(text, i))
        spans.append((a, len(text) if b < 0 else b))
    for m in DEFINE_RE.finditer(text):
        spans.append((m.start(), m.end()))
    spans.sort()
    merged = []
    for a, b in spans:
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(text.count("\n", 0, a) + 1, text[a:b]) for a, b in merged]


def kernel_pieces(fmt):
    """The literal pieces of a printk format: the kernel's %p extensions (%px, %pS, %pGg,
    %*pbl) are one conversion each, whatever letters follow the p."""
    return pieces(re.sub(r"%\*?p[A-Za-z]+", "%p", fmt))


def mine_region(path, first, text):
    out = []
    for line, call, level, i, _ in calls(text, first):
        fmt, ok = c_format(text, i)
        fmt = fmt.rstrip("\n")
        if not ok or not fmt.strip("%? \n"):
            continue
        ps = kernel_pieces(fmt)
        if ps:
            out.append({"file": path, "line": line, "call": call, "level": level,
                        "format": fmt, "pieces": ps})
    for m in DEFINE_RE.finditer(text):
        fmt, ok = c_format(m.group(2), 0)
        if ok and kernel_pieces(fmt):
            out.append({"file": path, "line": first + text.count("\n", 0, m.start()),
                        "call": "#define " + m.group(1), "level": "define", "format": fmt,
                        "pieces": kernel_pieces(fmt)})
    return out


def load_lock():
    with open(LOCK, encoding="utf-8") as f:
        return yaml.safe_load(f)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_sources(deb, member, prefix, wanted):
    """{path: bytes} of the wanted files of the source tarball inside the .deb."""
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True, capture_output=True,
                          timeout=300).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as outer:
        xz = outer.extractfile(member).read()
    found = {}
    with tarfile.open(fileobj=io.BytesIO(lzma.decompress(xz)), mode="r:") as t:
        for m in t:
            name = m.name[len(prefix):] if m.name.startswith(prefix) else None
            if name in wanted and m.isfile():
                found[name] = t.extractfile(m).read()
    return found


def extract():
    lock = load_lock()
    debs = os.environ.get("LINUX_DEBS", os.path.join(ROOT, "target", "knowledge-inputs", "linux"))
    releases = []
    for p in lock["packages"]:
        deb = os.path.join(debs, p["deb"])
        if not os.path.exists(deb):
            sys.exit(f"linux_mine extract: {deb} is missing; fetch it with: {p['fetch']}")
        got = sha256_file(deb)
        if got != p["sha256"]:
            sys.exit(f"linux_mine extract: {deb} has sha256 {got}, the lock says {p['sha256']}")
        src = read_sources(deb, p["member"], p["prefix"], set(lock["files"]))
        files = []
        for path in lock["files"]:
            if path not in src:
                files.append({"file": path, "absent": True})
                continue
            text = src[path].decode("utf-8", "replace")
            files.append({
                "file": path,
                "sha256": hashlib.sha256(src[path]).hexdigest(),
                "regions": [{"line": a, "text": t} for a, t in regions_of(text)],
            })
        releases.append({"package": p["name"], "version": p["version"], "deb_sha256": p["sha256"],
                         "kernel": p["kernel"], "files": files})
    return {
        "about": "Generated by scripts/knowledge/linux_mine.py extract (do not edit): the parts of "
                 "the Linux kernel's source that linux_mine.py build reads, from the Debian "
                 "packages pinned in scripts/knowledge/linux.lock.",
        "releases": releases,
    }


def mine(ex):
    """Every mined format, one entry per (file, format), with its line in each release."""
    by_key = {}
    for r in ex["releases"]:
        for f in r["files"]:
            for reg in f.get("regions", []):
                for e in mine_region(f["file"], reg["line"], reg["text"]):
                    k = (e["file"], e["format"])
                    cur = by_key.setdefault(k, {**{x: e[x] for x in ("file", "call", "level",
                                                                       "format", "pieces")},
                                                "lines": {}})
                    cur["lines"].setdefault(r["kernel"], e["line"])
    entries = sorted(by_key.values(), key=lambda e: (e["file"], min(e["lines"].values()),
                                                     e["format"]))
    return {
        "releases": [{"package": r["package"], "version": r["version"], "kernel": r["kernel"]}
                     for r in ex["releases"]],
        "entries": entries,
    }


CATEGORIES = {
    "driver_missing", "driver_too_old", "driver_library_mismatch", "arch_unsupported",
    "cuda_runtime_mismatch", "cudnn_mismatch", "cpu_only_build", "fabric_manager",
    "container_no_gpu", "library_path_conflict", "gpu_memory_exhausted", "ecc_memory",
    "hardware_fault", "driver_fault", "thermal_power", "pcie_degraded", "configuration",
    "smoke_failure", "stress_failure", "windows_crash_code", "application_error", "probe_timeout",
    "host_memory_exhausted",
}
ROLES = {"cause", "notice", "report"}
SCOPES = {"any", "nvidia_module", "gpu_module", "gpu_report"}
SEVERITIES = {"error", "warning", "info"}
AREAS = {"host", "driver", "gpus"}
# The shortest piece a line is looked for by (the catalog's prefilter needs a literal).
MIN_ANCHOR = 4


def build(mined, errors):
    table = yaml.safe_load(open(FAMILIES, encoding="utf-8"))
    kernels = [r["kernel"] for r in mined["releases"]]
    families = []
    entries = []
    ids = set()
    for fam in table["families"]:
        fid = fam["id"]
        if fid in ids:
            errors.append(f"linux_families.yaml: {fid} twice")
        ids.add(fid)
        for k, allowed in (("category", CATEGORIES), ("role", ROLES), ("scope", SCOPES),
                           ("severity", SEVERITIES), ("area", AREAS)):
            if fam.get(k) not in allowed:
                errors.append(f"linux_families.yaml: {fid}: {k} {fam.get(k)!r} is not one of {sorted(allowed)}")
        for k in ("title", "text", "fix", "sources"):
            if not fam.get(k):
                errors.append(f"linux_families.yaml: {fid}: no {k}")
        for sel in fam.get("select", []):
            hits = [e for e in mined["entries"]
                    if e["file"] == sel["file"] and re.search(sel["text"], e["format"])]
            if not hits:
                errors.append(f"linux_families.yaml: {fid}: {sel['file']}: {sel['text']!r} selects no mined format")
            for e in hits:
                anchor = max(e["pieces"], key=len)
                if len(anchor) < MIN_ANCHOR:
                    errors.append(f"linux_families.yaml: {fid}: {e['file']}: {e['format']!r} has no piece of {MIN_ANCHOR} characters")
                    continue
                versions = [k for k in kernels if k in e["lines"]]
                entries.append({
                    "family": fid,
                    "source": [f"{e['file']}:{e['lines'][k]} (Linux {k})" for k in versions],
                    "level": e["level"],
                    "format": e["format"],
                    "pieces": sel.get("pieces", e["pieces"]),
                    "versions": f"{versions[0]}-{versions[-1]}" if len(versions) > 1 else versions[0],
                    "category": fam["category"],
                    "role": fam["role"],
                    "fix": fam["fix"],
                })
        for c in fam.get("cited", []):
            if not c.get("source") or not c.get("pattern"):
                errors.append(f"linux_families.yaml: {fid}: a cited wording needs pattern and source")
                continue
            entries.append({
                "family": fid,
                "source": [c["source"]],
                "level": c.get("level", "?"),
                "format": c.get("format", " ".join(c["pattern"])),
                "pieces": c["pattern"],
                "versions": c["versions"],
                "mined": False,
                "category": fam["category"],
                "role": fam["role"],
                "fix": fam["fix"],
            })
        out = {k: fam[k] for k in ("id", "title", "text", "category", "severity", "area",
                                   "role", "scope", "rank")}
        out["causes"] = fam.get("causes", [])
        out["fix"] = fam["fix"]
        out["commands"] = fam.get("commands", [])
        out["sources"] = fam["sources"]
        if "unless" in fam:
            out["unless"] = fam["unless"]
        families.append(out)
    return {
        "emitter": "linux",
        "generated_by": "scripts/knowledge/linux_mine.py build (do not edit; edit "
                        "scripts/knowledge/linux_families.yaml)",
        "source": {"releases": mined["releases"]},
        "mined_formats": len(mined["entries"]),
        "families": families,
        "entries": entries,
    }


def write_or_check(path, text, check):
    if check:
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if old != text:
            print(f"linux_mine --check: {os.path.relpath(path, ROOT)} differs from what its "
                  "inputs give; run scripts/knowledge/linux_mine.py", file=sys.stderr)
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
        ex = extract()
        text = json.dumps(ex, indent=1, ensure_ascii=False) + "\n"
        print(f"extract: {len(ex['releases'])} releases, {len(text)} bytes")
        return write_or_check(EXTRACT, text, check)
    with open(EXTRACT, encoding="utf-8") as f:
        ex = json.load(f)
    mined = mine(ex)
    errors = []
    built = build(mined, errors)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    bad = write_or_check(MINED, json.dumps(mined, indent=1, ensure_ascii=False) + "\n", check)
    bad |= write_or_check(OUT, yaml.safe_dump(built, sort_keys=False, allow_unicode=True,
                                              width=100), check)
    print(f"linux: {built['mined_formats']} formats mined, {len(built['entries'])} in "
          f"{len(built['families'])} families")
    return bad


if __name__ == "__main__":
    sys.exit(main())
