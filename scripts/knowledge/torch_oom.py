#!/usr/bin/env python3
"""PyTorch's CUDA out-of-memory texts across its releases (issue 30), from the compiled emitter.

  extract [--check]  reads, out of every torch release's manylinux x86_64 wheel on PyPI (by HTTP
                     range: one member, never the whole wheel), torch/lib/libc10_cuda.so (the
                     caching allocator) and, for each minor version's x.y.0, libtorch_python.so
                     (the exception class names), and writes the pinned extract
                     scripts/knowledge/torch-oom-extract.json: each wheel's file name and sha256
                     (PyPI's index), each member's sha256, and the member's C strings that are
                     pieces of a wording or name an OOM class. Needs the network; with --check it
                     fails when PyPI gives another extract.
  build [--check]    reads only the extract and scripts/knowledge/torch_oom_wordings.yaml (each
                     wording as its source builds it) and writes knowledge/pytorch-oom.yaml: every
                     wording with the first and last release that prints it and the releases in
                     between. A release prints a wording when its library holds every literal
                     piece of it (each piece made of whole C strings of the library: adjacent
                     arguments of one TORCH_CHECK are separate strings; one glue of one or two
                     characters such as "; " may be the tail of a longer one, where the linker
                     merged it), and, in a family, the
                     wording that holds the most literal text wins. A wording no release prints
                     fails the build.

With --check nothing is written: the exit status is 1 when the committed file differs.
"""
import hashlib
import importlib.util
import json
import os
import re
import struct
import sys
import urllib.request
import zlib

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "scripts", "knowledge", "torch_oom_wordings.yaml")
EXTRACT = os.path.join(ROOT, "scripts", "knowledge", "torch-oom-extract.json")
OUT = os.path.join(ROOT, "knowledge", "pytorch-oom.yaml")
# The class names Python prints before the message.
CLASS = re.compile(r"^torch(\.cuda)?\.OutOfMemoryError$")


def load_spec():
    with open(SPEC) as f:
        return yaml.safe_load(f)


def vkey(v):
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def literals(pieces):
    """The literal pieces of a format, in order, with optional and repeated groups flattened;
    adjacent literals (no value between them) are one piece of printed text."""
    out, cur = [], ""
    for p in pieces:
        if isinstance(p, str):
            cur += p
            continue
        if cur:
            out.append(cur)
            cur = ""
        if "optional" in p or "repeat" in p:
            out.extend(literals(p["pieces"]))
    if cur:
        out.append(cur)
    return out


def all_literals(spec):
    lits = set()
    for w in spec["wordings"]:
        lits.update(literals(w["format"]))
    return lits


# ---------------------------------------------------------------------------------------------
# extract


def c_strings(data):
    """The NUL-terminated printable strings of a library (tab and newline included)."""
    return [
        m.group().decode("ascii")
        for m in re.finditer(rb"[\t\n\x20-\x7e]{2,}", data)
        if data[m.end():m.end() + 1] == b"\x00"
    ]


def keep(s, lits, key):
    """The strings the build reads: the class names; for the allocator, the strings of three
    characters or more that are part of a wording's literal text (shorter runs in a library are
    mostly bytes of code)."""
    if CLASS.match(s):
        return True
    return key != "python" and len(s) >= 3 and any(s in lit for lit in lits)


def wheel_files(index_files, version):
    """The manylinux x86_64 wheels of a release, cp310 first (the same library in each)."""
    c = [
        f for f in index_files
        if re.match(r"torch-%s(-\d+)?-cp" % re.escape(version), f["filename"])
        and "manylinux" in f["filename"] and "x86_64" in f["filename"]
    ]
    c.sort(key=lambda f: ("cp310" not in f["filename"], f["filename"]))
    return c


def read_member(wf, url, member):
    r = wf.Remote(url)
    cd = wf.central_directory(r, None)
    if member not in cd:
        return None
    (method, crc, csize, usize, lho) = cd[member]
    head = r.read(lho, 30)
    (nlen, xlen) = struct.unpack("<HH", head[26:30])
    raw = r.read(lho + 30 + nlen + xlen, csize)
    data = zlib.decompress(raw, -15) if method == 8 else raw
    if len(data) != usize or (zlib.crc32(data) & 0xFFFFFFFF) != crc:
        sys.exit("torch_oom: %s of %s failed its CRC/size check" % (member, url))
    return data


def extract(check):
    spec = load_spec()
    lits = all_literals(spec)
    ws = importlib.util.spec_from_file_location("wheel_files", os.path.join(ROOT, "scripts", "wheel-files.py"))
    wf = importlib.util.module_from_spec(ws)
    ws.loader.exec_module(wf)
    req = urllib.request.Request("%s/torch/" % wf.INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=wf.TIMEOUT) as r:
        files = json.load(r)["files"]
    versions = sorted(
        {m.group(1) for f in files for m in [re.match(r"torch-(\d+\.\d+\.\d+)-", f["filename"])] if m},
        key=vkey,
    )
    versions = [v for v in versions if vkey(v) >= vkey(spec["releases_from"])]
    out = []
    for v in versions:
        wheels = wheel_files(files, v)
        if not wheels:
            continue
        f = wheels[0]
        rel = {"version": v, "wheel": f["filename"], "wheel_sha256": f["hashes"]["sha256"], "members": {}}
        for key, member in spec["members"].items():
            if key == "python" and not v.endswith(".0"):
                continue
            data = read_member(wf, f["url"], member)
            if data is None:
                continue
            strs = sorted({s for s in c_strings(data) if keep(s, lits, key)})
            rel["members"][key] = {"member": member, "sha256": hashlib.sha256(data).hexdigest(), "strings": strs}
        print("extract: torch %s %s" % (v, f["filename"]), file=sys.stderr)
        out.append(rel)
    doc = {
        "generated_by": "scripts/knowledge/torch_oom.py extract (PyPI's torch wheels, one member each by HTTP range)",
        "releases": out,
    }
    text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
    return write_or_check(EXTRACT, text, check, "extract")


# ---------------------------------------------------------------------------------------------
# build


def made_of(lit, strings, glue):
    """Whether `lit` is a concatenation of whole C strings of a library (`strings`) and at most
    one piece of short glue ("; ", ", ") that the linker keeps only as the tail of a longer
    string (`glue`)."""
    INF = 99
    used = [INF] * (len(lit) + 1)
    used[0] = 0
    for i in range(len(lit)):
        if used[i] > 1:
            continue
        for j in range(i + 1, len(lit) + 1):
            if lit[i:j] in strings:
                used[j] = min(used[j], used[i])
            elif j - i <= 2 and lit[i:j] in glue:
                used[j] = min(used[j], used[i] + 1)
    return used[len(lit)] <= 1


def render(pieces):
    """The format as one line: literals as printed, values as {name}, groups in [ ]."""
    out = ""
    for p in pieces:
        if isinstance(p, str):
            out += p
        elif "optional" in p:
            out += "[" + render(p["pieces"]) + "]"
        elif "repeat" in p:
            out += "[" + render(p["pieces"]) + "]..."
        elif "text" in p:
            out += p["value"]
        else:
            (kind, name), = [(k, v) for k, v in p.items()]
            out += "{%s:%s}" % (name, kind)
    return out


def ranges(vs, order):
    """Consecutive runs of releases (in `order`) as "first - last"."""
    out, run = [], []
    for v in order:
        if v in vs:
            run.append(v)
        elif run:
            out.append(run)
            run = []
    if run:
        out.append(run)
    return [r[0] if len(r) == 1 else "%s - %s" % (r[0], r[-1]) for r in out]


def build(check):
    spec = load_spec()
    with open(EXTRACT) as f:
        ext = json.load(f)
    rels = ext["releases"]
    order = [r["version"] for r in rels]
    alloc = {r["version"]: set(r["members"].get("allocator", {}).get("strings", [])) for r in rels}
    glue = {v: {s[-k:] for s in ss for k in (1, 2)} for v, ss in alloc.items()}
    # Which wordings each release prints: in a family, the one with the most literal text.
    prints = {w["id"]: [] for w in spec["wordings"]}
    for r in rels:
        v = r["version"]
        best = {}
        for w in spec["wordings"]:
            lits = literals(w["format"])
            if all(made_of(lit, alloc[v], glue[v]) for lit in lits):
                size = sum(len(x) for x in lits)
                fam = w["family"]
                if fam not in best or size > best[fam][0]:
                    best[fam] = (size, w["id"])
        for _, wid in best.values():
            prints[wid].append(v)
    wordings = []
    for w in spec["wordings"]:
        vs = prints[w["id"]]
        if not vs:
            sys.exit("torch_oom: no release prints %s (its pieces are in no library)" % w["id"])
        e = {
            "id": w["id"],
            "family": w["family"],
            "signature": w["signature"],
            "raised_as": w.get("raised_as"),
            "category": "gpu_memory_exhausted",
            "first": vs[0],
            "last": vs[-1] if vs[-1] != order[-1] else None,
            "releases": ranges(set(vs), order),
            "source": w["source"],
        }
        for k in ("pr", "seen", "note"):
            if k in w:
                e[k] = w[k]
        e["text"] = render(w["format"])
        e["format"] = w["format"]
        wordings.append(e)
    # Replaced by: the wording of the same family printed by the release after its last.
    by_fam = {}
    for e in wordings:
        by_fam.setdefault(e["family"], []).append(e)
    for fam in by_fam.values():
        fam.sort(key=lambda e: vkey(e["first"]))
        for a, b in zip(fam, fam[1:]):
            a["replaced_by"] = b["id"]
    classes = []
    for c in spec["exception_classes"]:
        if "member" in c:
            vs = [r["version"] for r in rels if c["name"] in r["members"].get(c["member"], {}).get("strings", [])]
            if not vs:
                sys.exit("torch_oom: no release names %s" % c["name"])
            minor = lambda v: ".".join(v.split(".")[:2])
            last_read = [r["version"] for r in rels if c["member"] in r["members"]][-1]
            classes.append({"name": c["name"], "first": minor(vs[0]), "last": minor(vs[-1]) if vs[-1] != last_read else None,
                            "read_from": spec["members"][c["member"]] + " of each minor version's x.y.0"})
    for c in spec["exception_classes"]:
        if "before" in c:
            nxt = [x for x in classes if x["name"] == c["before"]]
            if not nxt:
                sys.exit("torch_oom: %s is before an unknown class" % c["name"])
            classes.append({"name": c["name"], "first": ".".join(order[0].split(".")[:2]), "before": nxt[0]["first"],
                            "read_from": "c10::Error (no OutOfMemoryError class in libtorch_python.so)"})
    inputs = [
        {"version": r["version"], "wheel": r["wheel"], "wheel_sha256": r["wheel_sha256"],
         "members": {k: m["sha256"] for k, m in r["members"].items()}}
        for r in rels
    ]
    doc = {
        "emitter": "pytorch",
        "generated_by": "scripts/knowledge/torch_oom.py build (from scripts/knowledge/torch-oom-extract.json and scripts/knowledge/torch_oom_wordings.yaml)",
        "about": "PyTorch's CUDA out-of-memory texts, one entry per wording, with the releases whose compiled library prints it. `last: null`: still printed by the newest release read. `format`: literal pieces and the values between them ({size: x} is format_size of bytes, {int: x} a device or PID; optional and repeated groups as named).",
        "format_size": spec["format_size"],
        "exception_classes": classes,
        "wordings": wordings,
        "inputs": inputs,
    }
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    return write_or_check(OUT, text, check, "build")


def write_or_check(path, text, check, what):
    if check:
        try:
            with open(path) as f:
                old = f.read()
        except OSError:
            old = None
        if old != text:
            print("%s --check: %s differs from what %s writes" % (what, os.path.relpath(path, ROOT), what))
            return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0


def main(argv):
    if len(argv) < 2 or argv[1] not in ("extract", "build"):
        sys.exit(__doc__)
    check = "--check" in argv[2:]
    return extract(check) if argv[1] == "extract" else build(check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
