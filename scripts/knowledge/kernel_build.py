#!/usr/bin/env python3
"""Build the kernel driver's knowledge from what kernel_mine.py mined and the hand-written mapping.

    kernel_build.py [--check]

Inputs (all in the repository, so CI can run it):
- knowledge/mined/kernel-xid.json, knowledge/mined/kernel-nvrm.json (kernel_mine.py);
- scripts/knowledge/xid_catalog.yaml (NVIDIA's Xid catalog, transcribed, cited);
- scripts/knowledge/kernel_events.yaml (message families -> events, cited).
Outputs: knowledge/xid.yaml and knowledge/kernel-events.yaml (embedded in the binary by
src/knowledge/kernel.rs). `--check` fails on any difference from the committed files.
"""
import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from kernel_mine import pieces  # noqa: E402

CATEGORIES = {
    "driver_missing", "driver_too_old", "driver_library_mismatch", "arch_unsupported",
    "cuda_runtime_mismatch", "cudnn_mismatch", "cpu_only_build", "fabric_manager",
    "container_no_gpu", "library_path_conflict", "gpu_memory_exhausted", "ecc_memory",
    "hardware_fault", "driver_fault", "thermal_power", "pcie_degraded", "configuration",
    "smoke_failure", "stress_failure", "windows_crash_code", "application_error", "probe_timeout",
    "host_memory_exhausted", "matrix_stale",
}
LEVELS = {"info", "app", "warn", "high", "crit"}
SEVERITIES = {"error", "warning", "info"}
AREAS = {"host", "driver", "gpus", "cuda", "cudnn", "frameworks", "environment"}
CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"


def head(mined, *extra):
    """The top of a generated file: its emitter, who wrote it, and the mined source (with the
    mined file's `extra` keys too)."""
    source = {k: mined[k] for k in ("repository", "commit", "version", *extra)}
    return {
        "emitter": "nvidia-kernel-driver",
        "generated_by": "scripts/knowledge/kernel_build.py (do not edit; edit its inputs)",
        "source": source,
    }


def load_json(name):
    with open(os.path.join(ROOT, "knowledge", "mined", name), encoding="utf-8") as f:
        return json.load(f)


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def xid_range(spec):
    if isinstance(spec, int):
        return [spec]
    a, b = str(spec).split("-")
    return list(range(int(a), int(b) + 1))


def build_xid(errors):
    mined = load_json("kernel-xid.json")
    cat = load_yaml(os.path.join(HERE, "xid_catalog.yaml"))
    by_num = {}
    for c in cat["codes"]:
        for s in c["xids"]:
            for n in xid_range(s):
                if n in by_num:
                    errors.append(f"xid_catalog.yaml: Xid {n} is listed twice")
                by_num[n] = c
                if c["category"] not in CATEGORIES:
                    errors.append(f"xid_catalog.yaml: Xid {n}: unknown category {c['category']}")
                if c["level"] not in LEVELS:
                    errors.append(f"xid_catalog.yaml: Xid {n}: unknown level {c['level']}")
    header = {}
    for e in mined["entries"]:
        header.setdefault(e["xid"], []).append(e)
    entries = []
    for n in sorted(set(by_num) | set(header)):
        h = header.get(n, [])
        c = by_num.get(n)
        names = [e["name"] for e in h]
        entry = {"xid": n}
        entry["driver_name"] = " / ".join(names) if names else None
        entry["header_line"] = h[0]["line"] if h else None
        if c:
            entry.update({
                "name": c["name"],
                "meaning": c["meaning"],
                "category": c["category"],
                "level": c["level"],
                "fix": c["action"],
                "catalog": "transcribed",
            })
        else:
            entry.update({
                "name": names[0],
                "meaning": f"an Xid the driver names {names[0]}; NVIDIA's Xid catalog, as "
                           "transcribed here, says nothing more about it",
                "category": "driver_fault",
                "level": "warn",
                "fix": f"no action is published for it here: read the text of the Xid line "
                          f"and NVIDIA's catalog ({CATALOG_URL}); reset the GPU if it repeats",
                "catalog": "none",
            })
        entries.append(entry)
    return {
        **head(mined, "header"),
        "catalog": cat["sources"],
        "entries": entries,
    }


def build_events(errors):
    mined = load_json("kernel-nvrm.json")
    m = load_yaml(os.path.join(HERE, "kernel_events.yaml"))
    events = []
    ids = set()
    used = set()
    for ev in m["events"]:
        eid = ev["id"]
        if eid in ids:
            errors.append(f"kernel_events.yaml: event {eid} twice")
        ids.add(eid)
        for k, allowed in (("category", CATEGORIES), ("severity", SEVERITIES), ("area", AREAS)):
            if ev[k] not in allowed:
                errors.append(f"kernel_events.yaml: {eid}: unknown {k} {ev[k]}")
        if not ev.get("sources"):
            errors.append(f"kernel_events.yaml: {eid}: no source")
        fams = []
        for f in ev["families"]:
            if "mined" in f:
                suffix, text = f["mined"].split(": ", 1)
                hits = [e for e in mined["entries"]
                        if e["file"].endswith("/" + suffix) and text in e["format"]]
                if not hits:
                    errors.append(f"kernel_events.yaml: {eid}: {f['mined']!r} matches no mined format")
                    continue
                # The driver prefixes every message it prints with "NVRM:" (nv_printf formats
                # carry it; NV_PRINTF adds it), so a family of its formats needs it too.
                ps = ["NVRM:"] + pieces(text)
                for h in hits:
                    used.add((h["file"], h["line"]))
                fams.append({
                    "pieces": ps,
                    "emitter": "nvidia-kernel-driver",
                    "source": [f"{h['file']}:{h['line']}" for h in hits],
                    "format": hits[0]["format"],
                    "level": hits[0]["level"],
                })
            else:
                ps = [p for p in f["pattern"]]
                fams.append({"pieces": ps, "emitter": f["emitter"], "source": [f["source"]]})
            if sum(len(p) for p in fams[-1]["pieces"]) < 6:
                errors.append(f"kernel_events.yaml: {eid}: a family with under 6 literal characters")
        out = {k: ev[k] for k in ("id", "title", "text", "category", "severity", "area", "causes",
                                  "fix", "commands", "sources")}
        out["families"] = fams
        events.append(out)
    return {
        **head(mined),
        "mined_formats": len(mined["entries"]),
        "mapped_formats": len(used),
        "entries": events,
    }


def dump(data):
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def main():
    check = "--check" in sys.argv[1:]
    errors = []
    outs = {"xid.yaml": build_xid(errors), "kernel-events.yaml": build_events(errors)}
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    bad = 0
    for name, data in outs.items():
        path = os.path.join(ROOT, "knowledge", name)
        text = dump(data)
        if check:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if old != text:
                print(f"kernel_build --check: {path} differs from what its inputs give; "
                      "run scripts/knowledge/kernel_build.py", file=sys.stderr)
                bad = 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"{name}: {len(data['entries'])} entries")
    ev = outs["kernel-events.yaml"]
    print(f"NVRM formats mined: {ev['mined_formats']}, mapped to events: {ev['mapped_formats']}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
