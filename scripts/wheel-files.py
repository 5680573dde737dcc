#!/usr/bin/env python3
"""Fetches single files out of a wheel on PyPI without downloading the whole wheel.

    wheel-files.py DIST==VERSION PLATFORM_TAG MEMBER=DEST [MEMBER=DEST ...]

The wheel is found through PyPI's JSON simple API (PEP 691), its zip central directory read with
an HTTP Range request, and each member fetched by range and checked against the CRC-32 the
central directory records. A 680 MB cuDNN wheel for Windows costs about 3 MB this way. When the
server does not honour Range, the whole wheel is downloaded instead. Exits non-zero, with the
reason, on any failure (no such version or platform, a member missing, a CRC mismatch).
"""
import json
import os
import struct
import sys
import urllib.request
import zlib

INDEX = os.environ.get("GPUDOCTOR_PYPI_SIMPLE", "https://pypi.org/simple")
TIMEOUT = 120


def get(url, rng=None):
    headers = {"User-Agent": "gpudoctor-test-setup"}
    if rng:
        headers["Range"] = "bytes=%s" % rng
    req = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
        return r.status, r.read()


def wheel_url(spec, tag):
    name, version = spec.split("==")
    req = urllib.request.Request(
        "%s/%s/" % (INDEX, name),
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
        files = json.load(r)["files"]
    norm = name.replace("-", "_")
    for f in files:
        fn = f["filename"]
        if fn.endswith(".whl") and fn.startswith("%s-%s-" % (norm, version)) and tag in fn:
            return f["url"], f.get("size")
    sys.exit("wheel-files: no %s wheel for %s on %s" % (tag, spec, INDEX))


class Remote:
    """The wheel read by ranges, or whole when ranges are refused."""

    def __init__(self, url):
        self.url = url
        self.whole = None
        status, tail = get(url, "-65536")
        if status != 206:
            self.whole = tail
            tail = tail[-65536:]
        self.tail = tail

    def read(self, off, n):
        if self.whole is not None:
            return self.whole[off:off + n]
        status, data = get(self.url, "%d-%d" % (off, off + n - 1))
        if status != 206:
            self.whole = data
            return data[off:off + n]
        return data


def central_directory(remote, size_hint):
    tail = remote.tail
    eocd = tail.rfind(b"PK\x05\x06")
    if eocd < 0:
        sys.exit("wheel-files: no end of central directory in the last 64 KiB")
    (entries, cd_size, cd_off) = struct.unpack("<HII", tail[eocd + 10:eocd + 20])
    if cd_off == 0xFFFFFFFF or entries == 0xFFFF:
        loc = tail.rfind(b"PK\x06\x07", 0, eocd)
        (z64_off,) = struct.unpack("<Q", tail[loc + 8:loc + 16])
        z64 = remote.read(z64_off, 56)
        (entries, cd_size, cd_off) = struct.unpack("<QQQ", z64[32:56])
    cd = remote.read(cd_off, cd_size)
    out = {}
    p = 0
    while p + 46 <= len(cd) and cd[p:p + 4] == b"PK\x01\x02":
        (method, crc, csize, usize, nlen, xlen, clen, lho) = struct.unpack(
            "<H4xIIIHHH8xI", cd[p + 10:p + 46]
        )
        name = cd[p + 46:p + 46 + nlen].decode("utf-8")
        extra = cd[p + 46 + nlen:p + 46 + nlen + xlen]
        # ZIP64 extra field: the 64-bit sizes and offset that do not fit.
        q = 0
        while q + 4 <= len(extra):
            (hid, hlen) = struct.unpack("<HH", extra[q:q + 4])
            if hid == 1:
                vals = extra[q + 4:q + 4 + hlen]
                k = 0
                if usize == 0xFFFFFFFF:
                    (usize,) = struct.unpack("<Q", vals[k:k + 8]); k += 8
                if csize == 0xFFFFFFFF:
                    (csize,) = struct.unpack("<Q", vals[k:k + 8]); k += 8
                if lho == 0xFFFFFFFF:
                    (lho,) = struct.unpack("<Q", vals[k:k + 8]); k += 8
            q += 4 + hlen
        out[name] = (method, crc, csize, usize, lho)
        p += 46 + nlen + xlen + clen
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    spec, tag = sys.argv[1], sys.argv[2]
    url, size = wheel_url(spec, tag)
    remote = Remote(url)
    cd = central_directory(remote, size)
    for pair in sys.argv[3:]:
        member, dest = pair.split("=", 1)
        if member not in cd:
            sys.exit("wheel-files: %s has no member %s" % (spec, member))
        (method, crc, csize, usize, lho) = cd[member]
        head = remote.read(lho, 30)
        (nlen, xlen) = struct.unpack("<HH", head[26:30])
        raw = remote.read(lho + 30 + nlen + xlen, csize)
        if method == 8:
            data = zlib.decompress(raw, -15)
        elif method == 0:
            data = raw
        else:
            sys.exit("wheel-files: %s uses compression method %d" % (member, method))
        if len(data) != usize or (zlib.crc32(data) & 0xFFFFFFFF) != crc:
            sys.exit("wheel-files: %s of %s failed its CRC/size check" % (member, spec))
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
