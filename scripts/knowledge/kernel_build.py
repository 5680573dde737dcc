#!/usr/bin/env python3
"""Build the kernel driver's knowledge from what kernel_mine.py mined and the hand-written mapping.

    kernel_build.py [--check]

Inputs (all in the repository, so CI can run it):
- knowledge/mined/kernel-xid.json, knowledge/mined/kernel-nvrm.json (kernel_mine.py);
- scripts/knowledge/xid_catalog.yaml (NVIDIA's Xid catalog, transcribed, cited);
- scripts/knowledge/kernel_events.yaml (message families -> events, cited);
- scripts/knowledge/kernel_families.yaml (the rule table that gives every mined format that no
  event maps a family: category, role and fix).
Outputs: knowledge/xid.yaml, knowledge/kernel-events.yaml and knowledge/kernel-messages.yaml
(every mined format with its event or family, category, role and fix), embedded in the binary by
src/knowledge/kernel.rs. `--check` fails on any difference from the committed files.
"""
import fnmatch
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
ROLES = {"cause", "context", "notice"}
GPU_CATEGORIES = {"hardware_fault", "ecc_memory", "thermal_power", "pcie_degraded"}
# A family's id in the generated data: apart from the events' ids (a family and an event may
# share a name, as fallen_off_bus does).
FAMILY_PREFIX = "nvrm_"
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
    used = {}
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
                    used.setdefault((h["file"], h["line"]), ev)
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
        if "rank" in ev:
            out["rank"] = ev["rank"]
        if "role" in ev:
            if ev["role"] not in ROLES:
                errors.append(f"kernel_events.yaml: {eid}: unknown role {ev['role']}")
            out["role"] = ev["role"]
        events.append(out)
    rm = load_json("kernel-rm-init.json")
    codes = rm["entries"][0]
    return {
        **head(mined),
        "mined_formats": len(mined["entries"]),
        "mapped_formats": len(used),
        # RmInitAdapter's codes ("RmInitAdapter failed! (0x%x:0x%x:%d)": the init stage, the
        # NV_STATUS, the source line), as the pinned release numbers them.
        "rm_init": {
            "source": [f"{rm['files'][0]} (rm_init_status)", f"{rm['files'][1]} (NV_STATUS_CODE)"],
            "init_status": [{"code": c["code"], "name": c["name"], "line": c["line"]}
                            for c in codes["init_status"]],
            "nv_status": [{"code": c["code"], "name": c["name"], "text": c["text"],
                           "line": c["line"]} for c in codes["nv_status"]],
        },
        "entries": events,
    }, used


def rule_matches(rule, entry):
    if "files" in rule and not any(fnmatch.fnmatchcase(entry["file"], g) for g in rule["files"]):
        return False
    if "level" in rule and rule["level"] != entry["level"]:
        return False
    if "text" in rule and not re.search(rule["text"], entry["format"]):
        return False
    return True


def line_pieces(e):
    """The pieces a line of the mined format holds, in order, its prefix first: "NVRM:" for the
    driver's printf (NV_PRINTF adds it, nv_printf formats carry it); for a printk of the Linux
    layer that does not print "NVRM:", the format's own prefix word ("nvidia-nvswitch:") or ""."""
    if e.get("call") in ("NV_DRM_LOG", "NV_DRM_DEV_LOG"):
        # DRM_ERROR("[nvidia-drm] " fmt) (kernel-open/nvidia-drm/nvidia-drm-priv.h).
        return ["[nvidia-drm]"] + e["pieces"]
    if e.get("call") != "printk" or e["format"].startswith("NVRM"):
        return ["NVRM:"] + e["pieces"]
    first, rest = e["pieces"][0], e["pieces"][1:]
    m = re.match(r"([\w-]+:)\s*(.*)$", first)
    if m and e["format"].startswith(m.group(1)):
        return [m.group(1)] + ([m.group(2)] if m.group(2) else []) + rest
    return [""] + e["pieces"]


def build_messages(errors, used):
    """Every mined format with the event that maps it (its category and fix) or else the first
    family rule it matches (kernel_families.yaml)."""
    mined = load_json("kernel-nvrm.json")
    table = load_yaml(os.path.join(HERE, "kernel_families.yaml"))
    rules = table["rules"]
    ids = set()
    for r in rules:
        if r["id"] in ids:
            errors.append(f"kernel_families.yaml: rule {r['id']} twice")
        ids.add(r["id"])
        if r["category"] not in CATEGORIES:
            errors.append(f"kernel_families.yaml: {r['id']}: unknown category {r['category']}")
        if r["role"] not in ROLES:
            errors.append(f"kernel_families.yaml: {r['id']}: unknown role {r['role']}")
        if not r.get("source") or not r.get("fix") or not r.get("title"):
            errors.append(f"kernel_families.yaml: {r['id']}: a rule needs title, fix and source")
        if "text" in r:
            try:
                re.compile(r["text"])
            except re.error as e:
                errors.append(f"kernel_families.yaml: {r['id']}: bad regex: {e}")
                return None
    counts = {r["id"]: 0 for r in rules}
    entries = []
    for e in mined["entries"]:
        out = {
            "source": f"{e['file']}:{e['line']}",
            "level": e["level"],
            "format": e["format"],
            # The driver prefixes every line it prints with "NVRM:" (pieces() drops it from
            # the formats that carry it), so a line of the family holds it first; a printk of
            # the Linux layer prints its own prefix ("nvidia-nvswitch: ...") or none.
            "pieces": line_pieces(e),
        }
        ev = used.get((e["file"], e["line"]))
        rule = next((r for r in rules if rule_matches(r, e)), None)
        if rule is None:
            errors.append(f"kernel_families.yaml: no rule matches {e['file']}:{e['line']}")
            continue
        counts[rule["id"]] += 1
        out["family"] = FAMILY_PREFIX + rule["id"]
        if ev is not None:
            # The event decides: it was written for these very lines.
            out["event"] = ev["id"]
            out["category"] = ev["category"]
            out["role"] = ev.get("role", "context" if ev["severity"] == "info" else "cause")
            out["fix"] = ev["fix"]
        else:
            out["category"] = rule["category"]
            out["role"] = rule["role"]
            out["fix"] = rule["fix"]
            out["mapped"] = "default"
        entries.append(out)
    for r in rules:
        if counts[r["id"]] == 0 and r["id"] not in ("driver_warning", "driver_error"):
            errors.append(f"kernel_families.yaml: rule {r['id']} matches no format mined "
                          "without an event")
    # Each family as an event (the shape of kernel-events.yaml's entries, so `check`, `explain`
    # and `run` describe a family's line as they describe an event's), with its role and the
    # number of formats whose first matching rule it is. A family is a weaker reading than an
    # event: a cause line of an error-level family is a warning, context and notice lines info.
    families = []
    for r in rules:
        sev = {"cause": "warning"}.get(r["role"], "info")
        area = "gpus" if r["category"] in GPU_CATEGORIES else "driver"
        families.append({
            "id": FAMILY_PREFIX + r["id"],
            "title": r["title"],
            "text": r["title"] + ". The driver printed: {detail}",
            "category": r["category"],
            "severity": sev,
            "area": area,
            "causes": [r.get("cause", r["title"])],
            "fix": r["fix"],
            "commands": r.get("commands", ["sudo dmesg -T | grep -E 'NVRM|Xid' | tail -40"]),
            "sources": [r["source"]],
            "families": [],
            "role": r["role"],
            "formats": counts[r["id"]],
        })
    roles = {}
    for x in entries:
        roles[x["role"]] = roles.get(x["role"], 0) + 1
    return {
        **head(mined),
        "mined_formats": len(mined["entries"]),
        "by_event": sum(1 for x in entries if "event" in x),
        "by_family": sum(1 for x in entries if "event" not in x),
        "roles": dict(sorted(roles.items())),
        "families": families,
        "entries": entries,
    }


def dump(data):
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def main():
    check = "--check" in sys.argv[1:]
    errors = []
    events, used = build_events(errors)
    outs = {"xid.yaml": build_xid(errors), "kernel-events.yaml": events,
            "kernel-messages.yaml": build_messages(errors, used)}
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
    msg = outs["kernel-messages.yaml"]
    print(f"NVRM formats mined: {ev['mined_formats']}, mapped to events: {ev['mapped_formats']}, "
          f"to families: {msg['by_family']}, with a category and a fix: "
          f"{sum(1 for x in msg['entries'] if x['category'] and x['fix'])}; roles: {msg['roles']}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
