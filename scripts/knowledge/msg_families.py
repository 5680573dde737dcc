#!/usr/bin/env python3
"""Message families of the frameworks, loaders, containers and the OS (issue 30).

  mine  [--check]  reads each emitter's own source (a fetched git mirror, a PyPI wheel's files, or
                   the strings of a wheel's binary) at the pinned input named in
                   knowledge/mapping/messages.yaml, and writes knowledge/mined/msg-<emitter>.json:
                   the format string, file:line, commit or version, level. An input not present
                   here is skipped (with --check: reported, not failed); a family whose emitter
                   could not be brought here (snapshot too large) is `cited` in the mapping and
                   copied as such, marked "mined": false.
  build [--check]  mined JSON + the mapping -> knowledge/messages/<emitter>.yaml: family id,
                   emitter, versions, source, literal pieces with typed holes, category, signature.

With --check nothing is written: the exit status is 1 when a committed file differs.
Inputs: git mirrors under $GPUDOCTOR_MIRRORS (default /work/.mirror/<owner>+<name>/repo); wheels
under $GPUDOCTOR_WHEELS (default target/knowledge-inputs), each fetched with the `pip download`
line its input names in the mapping; single members of wheels pinned in inputs.lock (`member`,
fetched by scripts/knowledge/inputs.py --fetch, checked against their sha256); Debian source
packages unpacked under $GPUDOCTOR_DEBSRC (default target/knowledge-inputs/debian), each with the
`apt-get source` line its input names (`debian`).
"""
import json
import os
import re
import subprocess
import sys
import zipfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAPPING = os.path.join(ROOT, "knowledge", "mapping", "messages.yaml")
MINED = os.path.join(ROOT, "knowledge", "mined")
OUT = os.path.join(ROOT, "knowledge", "messages")
CATEGORIES = {
    "driver_missing", "driver_too_old", "driver_library_mismatch", "arch_unsupported",
    "cuda_runtime_mismatch", "cudnn_mismatch", "cpu_only_build", "fabric_manager",
    "container_no_gpu", "library_path_conflict", "gpu_memory_exhausted", "ecc_memory",
    "hardware_fault", "driver_fault", "thermal_power", "pcie_degraded", "configuration",
    "smoke_failure", "stress_failure", "windows_crash_code", "application_error",
    "probe_timeout", "host_memory_exhausted",
}
# A string literal of Python, C/C++ or Go (optionally an f/r/b prefix), one line.
LITERAL = re.compile(r'''(?<![A-Za-z0-9_])([fFrRbBuU]{0,2})("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')''')
# An <inttypes.h> format macro between two C literals: "%"PRIu64" -> %u.
PRI = re.compile(r'"\s*PRI([diouxX])(?:8|16|32|64|MAX|PTR|LEAST\d+|FAST\d+)\s*"')
# A printf/format hole: {expr}, {:,}, %s, %d, %zu, %llu, %v, %q, %w, %U.
HOLE = re.compile(r"\{[^{}]*\}|%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[sdiuxXfgeEpcvqwUrR]")


def load_mapping():
    with open(MAPPING, encoding="utf-8") as f:
        return yaml.safe_load(f)


def mirrors():
    return os.environ.get("GPUDOCTOR_MIRRORS", "/work/.mirror")


def wheels():
    return os.environ.get("GPUDOCTOR_WHEELS", os.path.join(ROOT, "target", "knowledge-inputs"))


def find_wheel(name):
    for d, _, files in os.walk(wheels(), followlinks=True):
        if name in files:
            return os.path.join(d, name)
    return None


def debsrc():
    return os.environ.get("GPUDOCTOR_DEBSRC", os.path.join(ROOT, "target", "knowledge-inputs", "debian"))


def read_input(inp, path):
    """The text (or the strings, for a binary) of one file of an input, or None if absent."""
    kind = inp["kind"]
    if kind == "member":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import inputs  # noqa: E402 (the pinned members of inputs.lock)
        i = inputs.find(inp["spec"], path)
        if not os.path.exists(i.path):
            return None
        return inputs.text(inp["spec"], path)
    if kind == "debian":
        f = os.path.join(debsrc(), inp["dir"], path)
        if not os.path.exists(f):
            return None
        with open(f, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    if kind == "git":
        gd = os.path.join(mirrors(), inp["repo"].replace("/", "+"), "repo")
        if not os.path.isdir(gd):
            return None
        r = subprocess.run(["git", "--git-dir", gd, "show", f"{inp['commit']}:{path}"],
                           capture_output=True, timeout=120)
        if r.returncode != 0:
            return None
        return r.stdout.decode("utf-8", "replace")
    if kind in ("wheel", "wheel-strings"):
        w = find_wheel(inp["file"])
        if w is None:
            return None
        with zipfile.ZipFile(w) as z:
            data = z.read(path)
        if kind == "wheel":
            return data.decode("utf-8", "replace")
        # Like `strings -a`: runs of 4+ printable ASCII bytes, one per line.
        return "\n".join(m.group().decode("ascii") for m in re.finditer(rb"[\x20-\x7e]{4,}", data))
    return None


def unescape(lit):
    body = lit[1:-1]
    return (body.replace('\\"', '"').replace("\\'", "'").replace("\\n", "\n")
            .replace("\\t", "\t").replace("\\\\", "\\"))


def statement(lines, i, binary):
    """The message of the statement whose literal starts on line i: the literals of that line and
    of the lines after it that hold nothing but literals and brackets, up to the bracket that
    closes the statement. A line inside a triple-quoted string is its own message."""
    if binary:
        return lines[i]
    parts = []
    depth = 0
    for j in range(i, min(i + 12, len(lines))):
        # C's <inttypes.h> macros between literals ("%"PRIu64" process") are the conversion's
        # letter: one literal, one hole.
        line = PRI.sub(lambda m: m.group(1)[0], lines[j])
        found = LITERAL.findall(line)
        code = LITERAL.sub("", line)
        if not found:
            break
        if j > i and not re.fullmatch(r"[\s()+,;]*", code):
            break
        for _, lit in found:
            parts.append(unescape(lit))
        depth += code.count("(") - code.count(")")
        if depth <= 0 and (")" in code or ";" in code):
            break
    if not parts:
        return lines[i].strip()
    return "".join(parts)


def level_of(line):
    l = line.lower()
    if "warn" in l:
        return "warning"
    if "info" in l:
        return "info"
    return "error"


def mine_family(fam, inp):
    if inp["kind"] == "cited":
        return {"id": fam["id"], "format": fam["format"], "file": fam["file"],
                "line": fam.get("line"), "at": inp.get("commit") or inp.get("version"),
                "level": fam.get("level", "error"), "mined": False}
    text = read_input(inp, fam["file"])
    if text is None:
        return None
    binary = inp["kind"] == "wheel-strings"
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if fam["needle"] in ln:
            # A statement may open with its call a line above (raise X(\n "...").
            ctx = ln if LITERAL.search(ln) else ""
            prev = lines[i - 1] if i > 0 else ""
            fmt = statement(lines, i, binary)
            return {"id": fam["id"], "format": fmt, "file": fam["file"],
                    "line": None if binary else i + 1,
                    "string_index": i + 1 if binary else None,
                    "at": inp.get("commit") or inp.get("version"),
                    "level": fam.get("level") or level_of(prev + ctx), "mined": True}
    raise SystemExit(f"{fam['id']}: {fam['needle']!r} not found in {fam['file']} of {fam['input']}")


def check_shape(fam, inp):
    """A `shape` (how the emitter prints the family: its format joined with the text it prints in
    a hole, read from `file` and the `also` files, `INPUT:path` for another input's) must be made of the emitter's own text: each
    word of its literal pieces is found in one of those files. Returns the shape, or None when an input is
    absent here."""
    texts = []
    inputs = load_mapping()["inputs"]
    for f in [fam["file"]] + list(fam.get("also", [])):
        # `INPUT:path`: a file of another input (the libc whose strsignal a shell prints).
        other, _, path = f.partition(":")
        t = read_input(inputs[other], path) if path and other in inputs else read_input(inp, f)
        if t is None:
            return None
        texts.append(t)
    for piece in HOLE.split(fam["shape"]):
        for part in piece.split():
            p = part.strip(" :[]()'\"")
            if len(p) >= 3 and not any(p in t for t in texts):
                raise SystemExit(f"{fam['id']}: shape piece {p!r} is not in {fam['file']} {fam.get('also', [])}")
    return fam["shape"]


def po_translations(fam, inp):
    """A message's translations, as the emitter's own catalogs give them (`po_msgid` in the .po
    files of the folder `file`): one mined entry per language whose msgstr is another text."""
    if inp["kind"] != "debian":
        raise SystemExit(f"{fam['id']}: po_msgid needs a debian input")
    d = os.path.join(debsrc(), inp["dir"], fam["file"])
    if not os.path.isdir(d):
        return None
    out = []
    want = 'msgid "%s"' % fam["po_msgid"]
    for name in sorted(os.listdir(d)):
        if not name.endswith(".po"):
            continue
        lines = open(os.path.join(d, name), encoding="utf-8", errors="replace").read().split("\n")
        for i, ln in enumerate(lines):
            if ln == want and i + 1 < len(lines) and lines[i + 1].startswith('msgstr "'):
                t = unescape(lines[i + 1][len("msgstr "):])
                if t and normalise(t) != normalise(fam["po_msgid"]):
                    out.append({"id": f"{fam['id']}-{name[:-3].lower().replace('@', '-')}",
                                "format": t, "file": f"{fam['file']}/{name}", "line": i + 2,
                                "at": inp.get("commit") or inp.get("version"),
                                "level": fam.get("level", "error"), "mined": True})
    return out


def mine(check):
    m = load_mapping()
    by_emitter = {}
    skipped = set()
    for fam in m["families"]:
        inp = m["inputs"][fam["input"]]
        if fam.get("po_msgid"):
            got = po_translations(fam, inp)
            if got is None:
                skipped.add(fam["input"])
                by_emitter.setdefault(fam["emitter"], None)
                continue
            if by_emitter.get(fam["emitter"]) is None:
                by_emitter[fam["emitter"]] = []
            by_emitter[fam["emitter"]].extend(got)
            continue
        got = mine_family(fam, inp)
        if got is not None and fam.get("shape") and inp["kind"] != "cited":
            shape = check_shape(fam, inp)
            if shape is None:
                got = None
            else:
                got["shape"] = shape
        elif got is not None and fam.get("shape"):
            got["shape"] = fam["shape"]
        if got is None:
            skipped.add(fam["input"])
            by_emitter.setdefault(fam["emitter"], None)
            continue
        got = {k: v for k, v in got.items() if v is not None}
        if by_emitter.get(fam["emitter"]) is None:
            by_emitter[fam["emitter"]] = []
        by_emitter[fam["emitter"]].append(got)
    bad = 0
    for em, fams in sorted(by_emitter.items()):
        path = os.path.join(MINED, f"msg-{em}.json")
        if fams is None:
            continue
        if any(f["id"] in {x["id"] for x in m["families"] if x["input"] in skipped} for f in fams):
            pass
        # An emitter with an input absent here keeps its committed file.
        absent = [x for x in m["families"] if x["emitter"] == em and x["input"] in skipped]
        if absent:
            print(f"mine: {em}: input(s) {sorted({x['input'] for x in absent})} not here; kept as committed")
            continue
        text = json.dumps({"emitter": em, "families": fams}, indent=1, ensure_ascii=False) + "\n"
        if check:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if old != text:
                print(f"mine --check: {path} differs from what the pinned source gives")
                bad = 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    for s in sorted(skipped):
        print(f"mine: input {s} not present here: skipped")
    return bad


def normalise(s):
    """As catalog::normalise: typographic quotes and backticks folded, whitespace collapsed, lowercased."""
    s = s.replace("\u2018", "'").replace("\u2019", "'").replace("`", "'")
    s = s.replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(s.split()).lower()


def pieces_of(fmt, take=None, min_len=4):
    segs = HOLE.split(fmt)
    holes = HOLE.findall(fmt)
    out = [normalise(p) for p in segs]
    out = [p for p in out if len(p) >= min_len]
    if take:
        out = out[:take]
    return out, holes


def fill_hole(fmt, k, value):
    """The format with its hole k (from 0) printed as value."""
    n = [0]

    def one(m):
        i = n[0]
        n[0] += 1
        return value if i == k else m.group()

    return HOLE.sub(one, fmt)


def hole_type(h):
    if h.startswith("{"):
        return "number" if (":," in h or "size" in h or "count" in h) else "text"
    return "number" if h[-1] in "diuxXfgeE" else "text"


SIGNAL_CATEGORY = None


def signal_category(name):
    """A signal's category where the repository keeps it (explain-catalog/codes.yaml's signal
    table: one home per fact)."""
    global SIGNAL_CATEGORY
    if SIGNAL_CATEGORY is None:
        with open(os.path.join(ROOT, "explain-catalog", "codes.yaml"), encoding="utf-8") as f:
            t = yaml.safe_load(f)
        SIGNAL_CATEGORY = {c["name"]: c["category"] for c in t["signals"]["codes"]}
    if name not in SIGNAL_CATEGORY:
        raise SystemExit(f"build: signal {name} is not in explain-catalog/codes.yaml")
    return SIGNAL_CATEGORY[name]


# What a hole of each kind may be printed as, in a family's regex (on a normalised line).
HOLE_RE = {"number": r"\d+(?:\.\d+)?", "text": r".+?", "char": r"[+-]?"}


def regex_of(fmt):
    """The family's whole shape as a regex over a normalised line: its literal text in order
    (escaped, spaces optional where the emitter pads), its inner holes typed; leading and
    trailing holes left out (what comes before and after varies), word-bounded at both ends."""
    segs = HOLE.split(fmt)
    holes = HOLE.findall(fmt)
    parts = []
    for k, seg in enumerate(segs):
        lit = normalise(seg) if seg.strip() else ""
        esc = "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in lit)
        parts.append(esc.replace(" ", " *"))
        if k < len(holes):
            h = holes[k]
            kind = "char" if h.endswith("c") and h.startswith("%") else hole_type(h)
            parts.append(("\x00", HOLE_RE[kind]))
    # Drop holes (and empty literals) at both ends.
    while parts and (isinstance(parts[0], tuple) or parts[0] in ("", " *")):
        parts.pop(0)
    while parts and (isinstance(parts[-1], tuple) or parts[-1] in ("", " *")):
        parts.pop()
    out = []
    for x in parts:
        out.append(" *" + x[1] + " *" if isinstance(x, tuple) else x.strip(" *") if False else x)
    rx = "".join(out)
    rx = rx.strip()
    if rx and (rx[0].isalnum()):
        rx = "\\b" + rx
    if rx and rx[-1].isalnum():
        rx = rx + "\\b"
    return rx


def build(check):
    m = load_mapping()
    emitters = {}
    fams = []
    for fam in m["families"]:
        if not fam.get("po_msgid"):
            fams.append(fam)
            continue
        # A translated message: one family per language, recognised by its words on a short
        # pasted text (keys), the msgid's category and signature.
        path = os.path.join(MINED, f"msg-{fam['emitter']}.json")
        with open(path, encoding="utf-8") as f:
            mined = [x for x in json.load(f)["families"] if x["id"].startswith(fam["id"] + "-")]
        for x in mined:
            words = [w for w in re.split(r"[^\w]+", normalise(x["format"])) if w]
            fams.append(dict(fam, id=x["id"], file=x["file"], keys=words, keys_only=True,
                             po_msgid=None))
    for fam in fams:
        path = os.path.join(MINED, f"msg-{fam['emitter']}.json")
        with open(path, encoding="utf-8") as f:
            mined = {x["id"]: x for x in json.load(f)["families"]}
        got = mined.get(fam["id"])
        if got is None:
            raise SystemExit(f"build: {fam['id']} is not in {path}: run mine")
        if fam.get("signal"):
            if fam.get("category"):
                raise SystemExit(f"build: {fam['id']}: a signal's category is codes.yaml's; give none")
            fam = dict(fam, category=signal_category(fam["signal"]))
        if fam["category"] not in CATEGORIES:
            raise SystemExit(f"build: {fam['id']}: unknown category {fam['category']}")
        if not fam.get("signature") and not fam.get("fix") and not fam.get("signal"):
            raise SystemExit(f"build: {fam['id']}: needs a signature, a signal or a fix")
        # `value`: what the first hole is printed as in the family this entry stands for
        # (cuDNN's "Could not locate %s" is zlibwapi.dll).
        fmt = got.get("shape") or got["format"]
        holes = HOLE.findall(got["format"])
        if fam.get("value"):
            fmt = fill_hole(fmt, fam.get("hole", 0), fam["value"])
        # `values`: several holes printed as the family means them, {hole: value}.
        for k, v in sorted((fam.get("values") or {}).items(), reverse=True):
            fmt = fill_hole(fmt, int(k), v)
        rx = regex_of(fmt) if (fam.get("strict") or got.get("shape")) else None
        pieces, _ = pieces_of(fmt, fam.get("take"))
        if fam.get("keys_only"):
            if not fam.get("keys"):
                raise SystemExit(f"build: {fam['id']}: keys_only without keys")
            pieces = []
        if fam.get("pieces"):
            pieces = [normalise(p) for p in fam["pieces"]]
            for p in pieces:
                if p not in normalise(fmt):
                    raise SystemExit(f"build: {fam['id']}: piece {p!r} is not in the format")
        if not pieces and not fam.get("keys"):
            raise SystemExit(f"build: {fam['id']}: no literal piece of 4+ characters and no keys")
        if pieces and sum(len(p) for p in pieces) < 12 and not rx:
            raise SystemExit(f"build: {fam['id']}: pieces too short to recognise the family")
        inp = m["inputs"][fam["input"]]
        where = f"{fam['file']}:{got['line']}" if got.get("line") else (
            f"{fam['file']} (string {got['string_index']})" if got.get("string_index") else fam["file"])
        entry = {
            "id": fam["id"],
            "emitter": fam["emitter"],
            "versions": fam.get("versions", inp.get("versions", "")),
            "source": {
                "input": (inp.get("repo") or inp.get("pip") or inp.get("url") or inp.get("get")
                          or (inp.get("spec") and f"{inp['spec']} (scripts/knowledge/inputs.lock)")),
                "at": got["at"],
                "where": where,
                "mined": got["mined"],
            },
            "level": got["level"],
            "format": got["format"],
            "holes": [hole_type(h) for h in holes],
            "pieces": pieces,
        }
        if got.get("shape"):
            entry["shape"] = got["shape"]
        if rx:
            entry["regex"] = rx
        if fam.get("signal"):
            entry["signal"] = fam["signal"]
        if fam.get("value"):
            entry["value"] = fam["value"]
        if fam.get("keys"):
            entry["keys"] = fam["keys"]
            entry["keys_max_words"] = fam.get("keys_max_words", 10)
        entry["category"] = fam["category"]
        if fam.get("signature"):
            entry["signature"] = fam["signature"]
        if fam.get("fix"):
            entry["fix"] = fam["fix"]
        emitters.setdefault(fam["emitter"], []).append(entry)
    bad = 0
    for em, entries in sorted(emitters.items()):
        doc = {"emitter": em,
               "generated_by": "scripts/knowledge/msg_families.py build (from knowledge/mined/msg-%s.json and knowledge/mapping/messages.yaml)" % em,
               "entries": entries}
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
        path = os.path.join(OUT, f"{em}.yaml")
        if check:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if old != text:
                print(f"build --check: {path} differs from what build writes")
                bad = 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    names = {f"{em}.yaml" for em in emitters}
    for n in sorted(os.listdir(OUT)):
        if n.endswith(".yaml") and n not in names:
            print(f"build: {n} is not built from the mapping")
            bad = 1
    return bad


def main(argv):
    if len(argv) < 2 or argv[1] not in ("mine", "build"):
        print(__doc__)
        return 2
    check = "--check" in argv[2:]
    return mine(check) if argv[1] == "mine" else build(check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
