#!/usr/bin/env python3
"""Writes OUTDIR/excluded-urls.txt: every URL quoted in a tracked file of the repository (the
explain corpus, the joined and the sealed sets, the catalog's sources and examples, the docs),
normalised as the sealed-set briefs ask collectors to normalise theirs (lower-case host, no
`www.`, no fragment, query or trailing slash; on github.com a lower-cased path and `/pull/N` read
as `/issues/N`). URLs glued together in a text ("...issues/12https://...") are split first.
Run from the repository root: scripts/dev/sealed-exclusions.py OUTDIR (docs/sealed-sets/)."""
import os
import re
import subprocess
import sys

URL = re.compile(r"https?://[^\s'\"<>)\]`|,]+")


def norm(u):
    u = u.split("#")[0].split("?")[0].rstrip("/.:;")
    m = re.match(r"https?://(www\.)?([^/]+)(.*)", u)
    if not m:
        return None
    host, path = m.group(2).lower(), m.group(3)
    if host == "github.com":
        path = path.lower().replace("/pull/", "/issues/")
        path = re.sub(r"/(files|commits)$", "", path)
    return "https://" + host + path


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/dev/sealed-exclusions.py OUTDIR")
    files = subprocess.run(
        ["git", "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    seen = set()
    for f in files:
        if not f or not os.path.isfile(f):
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            data = fh.read()
        data = data.replace("https://", " https://").replace("http://", " http://")
        for u in URL.findall(data):
            n = norm(u)
            if n:
                seen.add(n)
    os.makedirs(sys.argv[1], exist_ok=True)
    with open(os.path.join(sys.argv[1], "excluded-urls.txt"), "w") as fh:
        fh.writelines(u + "\n" for u in sorted(seen))
    print(len(seen), "urls")


if __name__ == "__main__":
    main()
