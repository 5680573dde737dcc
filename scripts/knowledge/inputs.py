#!/usr/bin/env python3
"""The pinned inputs of the knowledge generators: single files out of PyPI wheels.

    inputs.py --fetch      fetch every input named in inputs.lock into the cache (idempotent)
    inputs.py --pin        (maintainers) fetch, then write the members' sha256 into inputs.lock

inputs.lock has one line per file: `DIST==VERSION PLATFORM WHEEL_SHA256 MEMBER MEMBER_SHA256`.
WHEEL_SHA256 is the sha256 PyPI's index gives for the wheel (checked against the index before
any byte is read, so a re-uploaded or different wheel is refused); MEMBER_SHA256 is checked on
the file once unpacked. Only the member is read, by HTTP range (scripts/wheel-files.py), so a
680 MB cuDNN wheel costs the size of one header.

The cache is $GPUDOCTOR_KNOWLEDGE_INPUTS or .knowledge-inputs/ at the repository root
(git-ignored): <cache>/<DIST>-<VERSION>/<MEMBER>.
"""
import hashlib
import importlib.util
import json
import os
import struct
import sys
import urllib.request
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOCK = os.path.join(ROOT, "scripts", "knowledge", "inputs.lock")
CACHE = os.environ.get("GPUDOCTOR_KNOWLEDGE_INPUTS", os.path.join(ROOT, ".knowledge-inputs"))


class Input:
    def __init__(self, spec, platform, wheel_sha, member, member_sha):
        self.spec, self.platform, self.wheel_sha = spec, platform, wheel_sha
        self.member, self.member_sha = member, member_sha
        self.dist, self.version = spec.split("==")

    @property
    def path(self):
        return os.path.join(CACHE, "%s-%s" % (self.dist, self.version), self.member)

    def cite(self):
        """How the data names this input: `dist==version:member`."""
        return "%s:%s" % (self.spec, self.member)


def load():
    out = []
    with open(LOCK) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(Input(*line.split()))
    return out


def find(spec, member):
    for i in load():
        if i.spec == spec and i.member == member:
            return i
    sys.exit("inputs: %s:%s is not in inputs.lock" % (spec, member))


def text(spec, member):
    """The pinned file's text, checked against its sha256; exits with the remedy when absent."""
    with open(checked_path(spec, member), "rb") as f:
        return f.read().decode("utf-8", "replace")


def checked_path(spec, member):
    """The pinned file's path (for a library to load), checked against its sha256."""
    i = find(spec, member)
    try:
        with open(i.path, "rb") as f:
            data = f.read()
    except OSError:
        sys.exit("inputs: %s is not fetched; run scripts/knowledge/inputs.py --fetch (or scripts/test-setup.sh)" % i.cite())
    if hashlib.sha256(data).hexdigest() != i.member_sha:
        sys.exit("inputs: %s differs from its pinned sha256; delete %s and fetch again" % (i.cite(), i.path))
    return i.path


def _wheel_files():
    spec = importlib.util.spec_from_file_location("wheel_files", os.path.join(ROOT, "scripts", "wheel-files.py"))
    wf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wf)
    return wf


def _wheel(wf, i):
    req = urllib.request.Request(
        "%s/%s/" % (wf.INDEX, i.dist), headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(req, timeout=wf.TIMEOUT) as r:
        files = json.load(r)["files"]
    prefix = "%s-%s-" % (i.dist.replace("-", "_"), i.version)
    for f in files:
        fn = f["filename"]
        if fn.endswith(".whl") and fn.startswith(prefix) and i.platform in fn:
            if f["hashes"].get("sha256") != i.wheel_sha:
                sys.exit("inputs: %s on the index has sha256 %s, the lock says %s" % (fn, f["hashes"].get("sha256"), i.wheel_sha))
            return f["url"]
    sys.exit("inputs: no %s wheel for %s" % (i.platform, i.spec))


def fetch(pin=False, ins=None):
    wf = None
    fetched = 0
    remotes = {}
    for i in ins if ins is not None else load():
        if os.path.exists(i.path) and not pin:
            with open(i.path, "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() == i.member_sha:
                    continue
        if wf is None:
            wf = _wheel_files()
        key = (i.spec, i.platform)
        if key not in remotes:
            r = wf.Remote(_wheel(wf, i))
            remotes[key] = (r, wf.central_directory(r, None))
        remote, cd = remotes[key]
        if i.member not in cd:
            sys.exit("inputs: %s has no member %s" % (i.spec, i.member))
        (method, crc, csize, usize, lho) = cd[i.member]
        head = remote.read(lho, 30)
        (nlen, xlen) = struct.unpack("<HH", head[26:30])
        raw = remote.read(lho + 30 + nlen + xlen, csize)
        data = zlib.decompress(raw, -15) if method == 8 else raw
        if len(data) != usize or (zlib.crc32(data) & 0xFFFFFFFF) != crc:
            sys.exit("inputs: %s failed its CRC/size check" % i.cite())
        sha = hashlib.sha256(data).hexdigest()
        if pin:
            i.member_sha = sha
        elif sha != i.member_sha:
            sys.exit("inputs: %s has sha256 %s, the lock says %s" % (i.cite(), sha, i.member_sha))
        os.makedirs(os.path.dirname(i.path), exist_ok=True)
        tmp = i.path + ".part"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, i.path)
        fetched += 1
    return fetched


def pin():
    """Rewrites the member sha256 column from freshly fetched members."""
    out = []
    with open(LOCK) as f:
        raw = f.readlines()
    ins = load()
    for i in ins:
        if os.path.exists(i.path):
            os.remove(i.path)
    fetch(pin=True, ins=ins)
    by = {(i.spec, i.member): i for i in ins}
    for line in raw:
        body = line.split("#", 1)[0].split()
        if len(body) == 5 and (body[0], body[3]) in by:
            i = by[(body[0], body[3])]
            line = "%s %s %s %s %s\n" % (i.spec, i.platform, i.wheel_sha, i.member, i.member_sha)
        out.append(line)
    with open(LOCK, "w") as f:
        f.writelines(out)


def main():
    if sys.argv[1:] == ["--fetch"]:
        n = fetch()
        print("knowledge inputs: %d fetched, all %d present in %s" % (n, len(load()), CACHE))
    elif sys.argv[1:] == ["--pin"]:
        pin()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
