#!/usr/bin/env bash
# Checks that ELF binaries need at most a given glibc: the highest GLIBC_x.y symbol version in
# their dynamic symbol table (`objdump -T`), that they are dynamically linked (gpudoctor dlopens
# the NVIDIA libraries, so a static binary would be useless), and that they need no library
# outside glibc's own.
#
#   scripts/check-glibc.sh [--max 2.17] BINARY...
#
# Prints one line per binary ("BINARY: GLIBC_2.17 at most, needs libc.so.6 ...") and exits 1
# when one needs more. objdump from binutils reads every architecture's ELF (aarch64 too).
set -euo pipefail
max=2.17
if [ "${1:-}" = "--max" ]; then
  max=$2
  shift 2
fi
if [ $# -eq 0 ]; then
  echo "usage: $0 [--max 2.17] BINARY..." >&2
  exit 2
fi
if ! command -v objdump >/dev/null 2>&1; then
  echo "$0: objdump (binutils) is needed" >&2
  exit 2
fi

# "2.17" < "2.28": compare as version numbers.
newer() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$1" ] && [ "$1" != "$2" ]; }

# The libraries glibc itself provides (the only ones a release binary may need at load time).
glibc_libs='^(libc|libm|libdl|libpthread|librt|libutil|libgcc_s|ld-linux-x86-64|ld-linux-aarch64)\.so'

status=0
for bin in "$@"; do
  if [ ! -f "$bin" ]; then
    echo "$bin: no such file" >&2
    status=1
    continue
  fi
  if ! objdump -f "$bin" >/dev/null 2>&1; then
    echo "$bin: not an ELF file objdump can read" >&2
    status=1
    continue
  fi
  # (Not `objdump | grep -q` under pipefail: grep's early exit can kill objdump with SIGPIPE.)
  dynamic=$(objdump -p "$bin")
  if ! grep -q 'NEEDED' <<<"$dynamic"; then
    echo "$bin: statically linked: gpudoctor must be linked dynamically to glibc (it dlopens libnvidia-ml and libcuda)" >&2
    status=1
    continue
  fi
  needed=$(awk '$1 == "NEEDED" {print $2}' <<<"$dynamic" | sort -u)
  top=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -1)
  if [ -z "$top" ]; then
    echo "$bin: no GLIBC symbol versions (not a glibc binary?)" >&2
    status=1
    continue
  fi
  echo "$bin: GLIBC_$top at most (limit $max); needs $(echo "$needed" | tr '\n' ' ' | sed 's/ $//')"
  if newer "$top" "$max"; then
    echo "$bin: needs GLIBC_$top, newer than $max; these symbols:" >&2
    objdump -T "$bin" | awk -v m="$max" '{for (i = 1; i <= NF; i++) if ($i ~ /^\(?GLIBC_[0-9]/) print $i, $NF}' \
      | tr -d '()' | sed 's/^GLIBC_//' | while read -r v sym; do
          if newer "$v" "$max"; then echo "  GLIBC_$v $sym" >&2; fi
        done
    status=1
  fi
  for lib in $needed; do
    if ! [[ $lib =~ $glibc_libs ]]; then
      echo "$bin: needs $lib at load time; only glibc's libraries may be linked (NVIDIA's are dlopened)" >&2
      status=1
    fi
  done
done
exit $status
