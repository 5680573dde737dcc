#!/usr/bin/env python3
"""Mines the error and status codes of CUDA, its libraries and NVML from their own headers.

    codes.py --write     regenerate knowledge/<emitter>.yaml for every emitter below
    codes.py --check     exit 1, with a diff, when a committed file differs from the output

Inputs: the headers pinned in scripts/knowledge/inputs.lock (fetch them with
`scripts/knowledge/inputs.py --fetch`) and the hand-written mapping of every code to a category,
knowledge/code-categories.yaml. Each output entry is one enumerator: its name, its number in each
version that has it (numbers differ across versions for cuDNN 8 and 9), the versions, the file and
line in the newest version that has it, the header's comment for it, and what
code-categories.yaml says (category, meaning, causes, fix). A code with no explicit entry takes
its family's default category, marked `mapped: default`; a code with neither fails the run.
"""
import difflib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inputs  # noqa: E402

try:
    import yaml
except ImportError:  # pragma: no cover
    sys.exit("codes.py needs PyYAML (it is in .venv-test: run it with .venv-test/bin/python)")

ROOT = inputs.ROOT
OUT = os.path.join(ROOT, "knowledge")
CATEGORIES = os.path.join(OUT, "code-categories.yaml")
SCHEMA = "gpudoctor.knowledge-codes/1"

CU11 = "nvidia-cuda-runtime-cu11==11.8.89"
CU12 = "nvidia-cuda-runtime-cu12==12.9.79"
CU13 = "nvidia-cuda-runtime==13.0.96"
RT = "nvidia/cuda_runtime/include/"
RT13 = "nvidia/cu13/include/"

# id, family, emitter, enum, how the enum is found, [(version label, input, member)], prefix of
# the names that belong to it (the enums are found by their type name).
EMITTERS = [
    ("cuda-runtime", "cuda", "CUDA runtime API (libcudart)", "cudaError_t", ("enum", "cudaError"),
     [("11", CU11, RT + "driver_types.h"), ("12", CU12, RT + "driver_types.h"), ("13", CU13, RT13 + "driver_types.h")]),
    ("cuda-driver", "cuda", "CUDA driver API (libcuda)", "CUresult", ("typedef", "CUresult"),
     [("11", CU11, RT + "cuda.h"), ("12", CU12, RT + "cuda.h"), ("13", CU13, RT13 + "cuda.h")]),
    ("cudnn", "cudnn", "cuDNN", "cudnnStatus_t", ("typedef", "cudnnStatus_t"),
     [("8", "nvidia-cudnn-cu11==8.9.6.50", "nvidia/cudnn/include/cudnn_ops_infer.h"),
      ("9", "nvidia-cudnn-cu12==9.1.0.70", "nvidia/cudnn/include/cudnn_graph.h")]),
    ("cublas", "cublas", "cuBLAS", "cublasStatus_t", ("typedef", "cublasStatus_t"),
     [("12", "nvidia-cublas-cu12==12.9.1.4", "nvidia/cublas/include/cublas_api.h")]),
    ("cufft", "cufft", "cuFFT", "cufftResult", ("typedef", "cufftResult"),
     [("11", "nvidia-cufft-cu12==11.4.1.4", "nvidia/cufft/include/cufft.h")]),
    ("cusolver", "cusolver", "cuSOLVER", "cusolverStatus_t", ("typedef", "cusolverStatus_t"),
     [("11", "nvidia-cusolver-cu12==11.7.5.82", "nvidia/cusolver/include/cusolver_common.h")]),
    ("cusparse", "cusparse", "cuSPARSE", "cusparseStatus_t", ("typedef", "cusparseStatus_t"),
     [("12", "nvidia-cusparse-cu12==12.5.10.65", "nvidia/cusparse/include/cusparse.h")]),
    ("curand", "curand", "cuRAND", "curandStatus_t", ("enum", "curandStatus"),
     [("10", "nvidia-curand-cu12==10.3.10.19", "nvidia/curand/include/curand.h")]),
    ("nccl", "nccl", "NCCL", "ncclResult_t", ("typedef", "ncclResult_t"),
     [("2", "nvidia-nccl-cu12==2.28.9", "nvidia/nccl/include/nccl.h")]),
    ("nvml", "nvml", "NVML (libnvidia-ml)", "nvmlReturn_t", ("typedef", "nvmlReturn_t"),
     [("12.9", "nvidia-nvml-dev-cu12==12.9.79", "nvidia/nvml_dev/include/nvml.h"),
      ("13.590", "nvidia-ml-py==13.590.48", "pynvml.py")]),
]

# The libraries whose own error strings are the codes' `text`: each is loaded (ctypes; no GPU or
# driver is needed) and asked cudaGetErrorName(n), which must give the entry's name, and
# cudaGetErrorString(n), what a program that reports the error prints. The newest version's text.
LIBS = {
    "cuda-runtime": ("cudaGetErrorName", "cudaGetErrorString",
                     [("11", CU11, "nvidia/cuda_runtime/lib/libcudart.so.11.0"),
                      ("12", CU12, "nvidia/cuda_runtime/lib/libcudart.so.12"),
                      ("13", CU13, "nvidia/cu13/lib/libcudart.so.13")]),
}

# A text is recognised alone (`alone: true`: without "CUDA error" or an error name beside it)
# when it is CUDA's own: three or four words with a CUDA term below, or five words or more; and
# neither a C library strerror() text (cudaErrorNotSupported prints "operation not supported", as
# EOPNOTSUPP does) nor one of GENERIC, which other programs print in the same words. Shorter or
# plainer texts ("out of memory", "unknown error", "misaligned address") are read only on a line
# that already says CUDA failed.
CUDA_TERMS = {
    "cuda", "device", "devices", "kernel", "launch", "launches", "ptx", "jit", "texture", "textures",
    "texturing", "surface", "surfaces", "mps", "nvlink", "ecc", "grid", "__syncthreads", "cooperative",
    "capture", "capturing", "captured", "uncaptured", "stream", "graph", "peer", "pointer", "symbol",
    "context", "profiler", "memcpy", "driver", "pitch", "channel", "ordinal", "__global__",
    "cudadevicesynchronize", "cudalimitdevruntimesyncdepth", "cudalimitdevruntimependinglaunchcount",
    "cudaprofilerinitialize", "gpu", "blocks", "emulation", "illegal", "hw", "handle", "configuration",
}
GENERIC = {
    "device not ready",                  # SCSI sense data, Windows ERROR_NOT_READY
    "named symbol not found",            # loaders and debuggers
    "shared object symbol not found",
    "context is destroyed",
    "driver shutting down",
    "the operation cannot be performed in the present state",
}


STRERROR = {os.strerror(i).lower() for i in range(1, 200)}


def alone(text):
    plain = text.lower().rstrip(".")
    words = re.findall(r"[a-z_][a-z0-9_]*", plain)
    if plain in STRERROR or plain in GENERIC:
        return False
    return len(words) >= 5 or (len(words) >= 3 and any(w in CUDA_TERMS for w in words))


# Emitters whose texts come from a table of NVIDIA's (the library itself ships only with the
# driver): a YAML file of `source` and `texts` (name -> text) beside this script.
TEXT_TABLES = {"nvml": os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvml_error_strings.yaml")}


def table_texts(ident, codes):
    """name -> (text, cite) from the emitter's text table; every name must be a mined code."""
    with open(TEXT_TABLES[ident]) as f:
        data = yaml.safe_load(f)
    out = {}
    for name, text in data["texts"].items():
        if name not in codes:
            sys.exit("%s: %s is not a code of %s" % (os.path.basename(TEXT_TABLES[ident]), name, ident))
        out[name] = (text, "%s errorString(%s)" % (data["source"], name))
    return out


def library_texts(ident, codes):
    """name -> (text, cite) from the emitter's own library, where LIBS has it (or its table)."""
    if ident in TEXT_TABLES:
        return table_texts(ident, codes)
    if ident not in LIBS:
        return {}
    import ctypes
    name_fn, text_fn, libs = LIBS[ident]
    out = {}
    for label, spec, member in libs:
        path = inputs.checked_path(spec, member)
        lib = ctypes.CDLL(path)
        getattr(lib, name_fn).restype = ctypes.c_char_p
        getattr(lib, text_fn).restype = ctypes.c_char_p
        for name, c in codes.items():
            for num, vers in c["values"].items():
                if label not in vers:
                    continue
                got = getattr(lib, name_fn)(num)
                if got is None or got.decode() != name:
                    continue
                text = getattr(lib, text_fn)(num)
                if text:
                    out[name] = (text.decode(), "%s:%s %s(%d)" % (spec, member, text_fn, num))
    return out


# Enumerators that are not errors of the program's run: the enum's count or a sentinel.
NOT_CODES = {"ncclNumResults", "cudaErrorApiFailureBase"}


def clean_doc(lines):
    text = " ".join(l.replace("*/", " ").strip().lstrip("*").strip() for l in lines)
    text = re.sub(r"/\*\*?|\*/|///?<?|//!<", " ", text)
    text = re.sub(r"\\(?:p|ref|c|note|deprecated)\b\s*", "", text)
    text = re.sub(r"::(\w)", r"\1", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text


def enum_body(text, how):
    """(first line number, body text) of the enum named by `how`."""
    kind, name = how
    if kind == "enum":
        m = re.search(r"enum\s+(?:__device_builtin__\s+)?%s\s*\{" % re.escape(name), text)
        if not m:
            return None
        start = m.end()
        end = text.index("}", start)
    else:
        # typedef enum [tag] { ... } name;
        end_m = re.search(r"\}\s*%s\s*;" % re.escape(name), text)
        if not end_m:
            return None
        end = end_m.start()
        start = text.rindex("{", 0, end) + 1
        # A nested brace cannot occur in these enums.
    return text.count("\n", 0, start) + 1, text[start:end]


ENUM_LINE = re.compile(r"^\s*([A-Za-z_]\w*)(?:\s+[A-Z_]+)?\s*=\s*([^,/]+?)\s*(,|$|/)")


def parse_enum(text, how):
    """[(name, value, line, doc)] of a C enum, values resolved (numbers or earlier names)."""
    found = enum_body(text, how)
    if not found:
        return None
    first, body = found
    out, values, pending = [], {}, []
    lines = body.split("\n")
    i = 0
    in_block = False
    while i < len(lines):
        raw = lines[i]
        s = raw.strip()
        lineno = first + i
        if in_block:
            pending.append(s)
            if "*/" in s:
                in_block = False
            i += 1
            continue
        if s.startswith("/*") and not re.match(r"^/\*.*\*/\s*$", s) and "=" not in s:
            in_block = "*/" not in s
            pending = [s] if s.startswith("/**") else []
            if not s.startswith("/**"):
                # a plain comment (a section title): not documentation of the next code
                in_block_plain = "*/" not in s
                while in_block_plain and i + 1 < len(lines):
                    i += 1
                    if "*/" in lines[i]:
                        in_block_plain = False
                in_block = False
            i += 1
            continue
        if s.startswith("//") or re.match(r"^/\*.*\*/\s*$", s):
            if s.startswith(("/**", "///", "//!")):
                pending.append(s)
            i += 1
            continue
        # an enumerator, possibly with its value on the next line
        m = re.match(r"^\s*(?:typedef\s+enum\s*\{\s*)?([A-Za-z_]\w*)(?:\s+[A-Z_]+)?\s*(=)?\s*(.*)$", raw)
        if not m:
            i += 1
            continue
        name, eq, rest = m.group(1), m.group(2), m.group(3)
        if eq and not rest.strip():
            i += 1
            rest = lines[i].strip()
        trailing = ""
        for mark in ("//!<", "///<", "/**<", "/*"):
            if mark in rest:
                rest, trailing = rest.split(mark, 1)
                trailing = trailing.replace("*/", "")
                break
        v = rest.strip().rstrip(",").strip()
        if not eq:
            v = None
        if v is None:
            value = (out[-1][1] + 1) if out else 0
        elif re.fullmatch(r"-?(0x[0-9A-Fa-f]+|\d+)", v):
            value = int(v, 0)
        elif v in values:
            value = values[v]
        else:
            sys.exit("codes.py: cannot read the value %r of %s" % (v, name))
        values[name] = value
        doc = clean_doc(pending + ([trailing] if trailing.strip() else []))
        out.append((name, value, lineno, doc))
        pending = []
        i += 1
    return out


def parse_pynvml(text):
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^(NVML_SUCCESS|NVML_ERROR_\w+)\s*=\s*(-?\d+)\s*$", line)
        if m:
            out.append((m.group(1), int(m.group(2)), n, ""))
    return out


def mine(em):
    ident, family, emitter, enum, how, srcs = em
    codes = {}  # name -> {"values": {num: [versions]}, versions, source, doc}
    order = []
    for label, spec, member in srcs:
        text = inputs.text(spec, member)
        py = member.endswith(".py")
        rows = parse_pynvml(text) if py else parse_enum(text, how)
        if not rows:
            sys.exit("codes.py: no %s in %s:%s" % (enum, spec, member))
        for name, value, line, doc in rows:
            if name in NOT_CODES:
                continue
            c = codes.get(name)
            if c is None:
                c = codes[name] = {"values": {}, "versions": [], "source": "", "doc": ""}
                order.append(name)
            c["values"].setdefault(value, []).append(label)
            if label not in c["versions"]:
                c["versions"].append(label)
            if not py or not c["source"]:
                c["source"] = "%s:%s:%d" % (spec, member, line)
            if doc:
                c["doc"] = doc
    return codes, order


def load_categories():
    with open(CATEGORIES) as f:
        data = yaml.safe_load(f)
    fams = data["families"]
    by = {}
    for fam, body in fams.items():
        for e in body.get("codes", []):
            for n in e["names"]:
                if (fam, n) in by:
                    sys.exit("code-categories.yaml: %s is listed twice in %s" % (n, fam))
                by[(fam, n)] = e
    return fams, by


def q(s):
    """A YAML double-quoted scalar."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(em, codes, order, fams, by):
    ident, family, emitter, enum, how, srcs = em
    texts = library_texts(ident, codes)
    fam = fams.get(family)
    if fam is None or "default" not in fam:
        sys.exit("code-categories.yaml: family %s has no default category" % family)
    lines = [
        "# Generated by scripts/knowledge/codes.py from the pinned headers (scripts/knowledge/inputs.lock)",
        "# and knowledge/code-categories.yaml. Do not edit: change those and run it with --write.",
        "schema: %s" % SCHEMA,
        "emitter: %s" % q(emitter),
        "id: %s" % ident,
        "family: %s" % family,
        "enum: %s" % enum,
        "sources:",
    ]
    for label, spec, member in srcs:
        lines.append("- %s" % q("%s:%s (version %s)" % (spec, member, label)))
    lines.append("category_sources:")
    for s in fam.get("sources", []):
        lines.append("- %s" % q(s))
    lines.append("default_category: %s" % fam["default"]["category"])
    lines.append("default_why: %s" % q(fam["default"].get("source", "")))
    lines.append("entries:")
    used = set()
    for name in order:
        c = codes[name]
        if name.endswith(("SUCCESS", "Success")) or name in ("cudaSuccess", "ncclSuccess"):
            continue
        e = by.get((family, name))
        if e is not None:
            used.add(name)
        lines.append("- name: %s" % name)
        lines.append("  values:")
        for num, vers in sorted(c["values"].items()):
            lines.append("  - num: %d" % num)
            lines.append("    versions: [%s]" % ", ".join(q(v) for v in vers))
        lines.append("  versions: [%s]" % ", ".join(q(v) for v in c["versions"]))
        lines.append("  source: %s" % q(c["source"]))
        if c["doc"]:
            lines.append("  doc: %s" % q(c["doc"]))
        lib = texts.get(name)
        if lib and e is not None and e.get("text") and e["text"] != lib[0]:
            sys.exit("code-categories.yaml: %s says %r, its library prints %r" % (name, e["text"], lib[0]))

        def text_lines():
            if lib:
                lines.append("  text: %s" % q(lib[0]))
                lines.append("  text_source: %s" % q(lib[1]))
                if ident in LIBS and alone(lib[0]):
                    lines.append("  alone: true")
            elif e is not None and e.get("text"):
                lines.append("  text: %s" % q(e["text"]))
        if e is None:
            lines.append("  category: %s" % fam["default"]["category"])
            lines.append("  mapped: default")
            text_lines()
            continue
        lines.append("  category: %s" % e["category"])
        lines.append("  mapped: explicit")
        text_lines()
        if e.get("meaning"):
            lines.append("  meaning: %s" % q(e["meaning"]))
        if e.get("causes"):
            lines.append("  causes:")
            for cause in e["causes"]:
                lines.append("  - %s" % q(cause))
        if e.get("fix"):
            lines.append("  fix: %s" % q(e["fix"]))
        if e.get("commands"):
            lines.append("  commands: [%s]" % ", ".join(q(x) for x in e["commands"]))
        if e.get("source"):
            lines.append("  why: %s" % q(e["source"]))
    return "\n".join(lines) + "\n", used


def generate():
    fams, by = load_categories()
    outs = {}
    used = {}
    mined = {}
    for em in EMITTERS:
        codes, order = mine(em)
        text, u = render(em, codes, order, fams, by)
        outs[os.path.join(OUT, em[0] + ".yaml")] = text
        used.setdefault(em[1], set()).update(u)
        mined.setdefault(em[1], {}).update({n: codes[n] for n in order})
    # Every explicit entry names a mined code: a misspelt name would silently map nothing.
    for (fam, name) in by:
        if name not in used.get(fam, set()):
            sys.exit("code-categories.yaml: %s (%s) is not a code the headers define" % (name, fam))
    # CUDA: a number means one thing to check (CUresult) and explain (both names): the runtime
    # and driver codes with the same number must not map to different categories.
    cat = {}
    for path, text in outs.items():
        data = yaml.safe_load(text)
        if data["family"] != "cuda":
            continue
        for e in data["entries"]:
            for v in e["values"]:
                cat.setdefault(v["num"], set()).add((e["category"], e["name"]))
    for num, pairs in sorted(cat.items()):
        if len({c for c, _ in pairs}) > 1:
            sys.exit("code-categories.yaml: CUDA error %d maps to different categories: %s" % (num, sorted(pairs)))
    return outs


def main():
    mode = sys.argv[1:]
    if mode not in (["--write"], ["--check"]):
        sys.exit(__doc__)
    outs = generate()
    bad = 0
    for path, text in sorted(outs.items()):
        rel = os.path.relpath(path, ROOT)
        old = open(path).read() if os.path.exists(path) else ""
        if old == text:
            continue
        if mode == ["--write"]:
            with open(path, "w") as f:
                f.write(text)
            print("wrote %s" % rel)
        else:
            bad += 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), "committed/" + rel, "generated/" + rel))
    if bad:
        print("codes.py --check: %d file(s) differ from the generator's output; run scripts/knowledge/codes.py --write" % bad)
        sys.exit(1)


if __name__ == "__main__":
    main()
