#!/usr/bin/env python3
"""Checks that a change to `explain` changed no answer: compares the JSON output of two gpudoctor
binaries, byte for byte, on every text of the public corpus and on the log files given, each read
three ways: `--log FILE`, `< FILE` and through a pipe.

    scripts/explain-exactness.py OLD_BINARY NEW_BINARY tests/explain-corpus [LOG...]

The logs are typically those of scripts/bench-explain-gen.py. tests/explain-sealed/ is never
read (a sealed evaluation set). Prints each difference and a count; exits 1 when any differs."""
import glob, os, subprocess, sys, tempfile, yaml

old, new, corpus = sys.argv[1], sys.argv[2], sys.argv[3]
logs = sys.argv[4:]

def run(b, mode, path):
    if mode == 'log':
        return subprocess.run([b, 'explain', '--json', '--log', path], capture_output=True).stdout
    if mode == 'file':
        with open(path, 'rb') as f:
            return subprocess.run([b, 'explain', '--json'], stdin=f, capture_output=True).stdout
    return subprocess.run(f'cat "{path}" | "{b}" explain --json', shell=True, capture_output=True).stdout

texts = []
for y in sorted(glob.glob(os.path.join(corpus, '**', '*.yaml'), recursive=True)):
    assert 'explain-sealed' not in y
    for e in yaml.safe_load(open(y)) or []:
        if isinstance(e, dict):
            for k in ('text', 'line', 'lines'):
                if isinstance(e.get(k), str):
                    texts.append((y, e[k]))
diff = 0
n = 0
with tempfile.TemporaryDirectory() as d:
    for i, (y, t) in enumerate(texts):
        p = os.path.join(d, f't{i}.txt')
        open(p, 'w').write(t)
        for mode in ('log', 'file', 'pipe'):
            a, b = run(old, mode, p), run(new, mode, p)
            n += 1
            if a != b:
                diff += 1
                print('DIFF', y, mode, repr(t[:80]))
for l in logs:
    for mode in ('log', 'file', 'pipe'):
        a, b = run(old, mode, l), run(new, mode, l)
        n += 1
        if a != b:
            diff += 1
            print('DIFF', l, mode)
        elif b'"matches": []' in b:
            print('NOTE: no match', l, mode)
print(f'{len(texts)} corpus texts, {len(logs)} logs: {n} comparisons, {diff} differences')
sys.exit(1 if diff else 0)
