#!/usr/bin/env bash
# The Windows build (x86_64-pc-windows-gnu, Debian's mingw-w64) and its tests under Debian's Wine.
#
#   scripts/test-windows.sh [--no-clippy] [CARGO TEST ARGS...]
#
# Installs what it needs (mingw-w64 and wine from Debian, the Rust target), makes a Wine prefix
# in target/wine (git-ignored) with a stand-in bcryptprimitives.dll (Rust's std calls ProcessPrng,
# which Wine 8 lacks: scripts/dev/bcryptprimitives.c), fetches the real Windows CUDA DLLs from
# PyPI (scripts/test-setup.sh), runs clippy for the Windows target, then the unit tests and the
# Windows integration tests through Wine (CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER). Extra
# arguments go to cargo test (e.g. `--test it windows_tdr::`, `--no-fail-fast`); without a --test
# or --lib among them, the unit tests run, then the modules tests/it/windows*.rs of the one
# integration test binary (`--test it windows:: windows_fixes:: ...`: the filters match a test
# whose path holds one, and only these modules' paths do).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=x86_64-pc-windows-gnu
clippy=1
if [ "${1:-}" = "--no-clippy" ]; then
  clippy=0
  shift
fi

if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || ! command -v wine >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends mingw-w64 wine wine64 >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends mingw-w64 wine wine64 >/dev/null; }
fi
if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx "$TARGET"; then
  rustup target add "$TARGET" >/dev/null
fi
scripts/test-setup.sh

target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir=$PWD/$target_dir ;; esac
export WINEPREFIX=${WINEPREFIX:-$target_dir/wine}
export WINEDEBUG=${WINEDEBUG:--all}
# No "Wine Mono/Gecko is missing" dialogs, no display.
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=;winedbg.exe=d}
unset DISPLAY
if [ ! -f "$WINEPREFIX/.gpudoctor-v1" ]; then
  rm -rf "$WINEPREFIX"
  mkdir -p "$WINEPREFIX"
  wineboot -i >/dev/null 2>&1 || true
  wineserver -w || true
  x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
    scripts/dev/bcryptprimitives.c -ladvapi32
  date -u > "$WINEPREFIX/.gpudoctor-v1"
fi
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
# The stand-in driver libraries of tests/standin, built as Windows DLLs (nvml.dll, nvcuda.dll)
# for tests/it/windows_standin.rs: Wine has no NVIDIA driver.
export GPUDOCTOR_WIN_STANDINS=$target_dir/standin-win
mkdir -p "$GPUDOCTOR_WIN_STANDINS"
x86_64-w64-mingw32-gcc -shared -O1 -o "$GPUDOCTOR_WIN_STANDINS/nvml.dll" tests/standin/libnvidia-ml.c
x86_64-w64-mingw32-windres tests/standin/nvcuda.rc -O coff -o "$GPUDOCTOR_WIN_STANDINS/nvcuda.res"
x86_64-w64-mingw32-gcc -shared -O1 -o "$GPUDOCTOR_WIN_STANDINS/nvcuda.dll" tests/standin/libcuda.c \
  "$GPUDOCTOR_WIN_STANDINS/nvcuda.res"
# The stand-in driver that runs our PTX (crates/standin-cuda, the same source as the Linux
# tests' libcuda.so.1), as gpu/nvcuda.dll, for tests/it/windows_standin_gpu.rs.
cargo build -p standin-cuda --target "$TARGET"
mkdir -p "$GPUDOCTOR_WIN_STANDINS/gpu"
cp "$target_dir/$TARGET/debug/standin_cuda.dll" "$GPUDOCTOR_WIN_STANDINS/gpu/nvcuda.dll"

if [ "$clippy" = 1 ]; then
  echo "== cargo clippy --target $TARGET --workspace --all-targets -- -D warnings"
  cargo clippy --target "$TARGET" --workspace --all-targets -- -D warnings
fi
echo "== cargo test --target $TARGET (under Wine)"
status=0
case " $* " in
  *" --test "* | *" --lib "*) cargo test --target "$TARGET" "$@" || status=$? ;;
  *)
    cargo test --target "$TARGET" --lib "$@" || status=$?
    filters=()
    for t in tests/it/windows*.rs; do filters+=("$(basename "$t" .rs)::"); done
    case " $* " in *" -- "*) ;; *) set -- "$@" -- ;; esac
    cargo test --target "$TARGET" --test it "$@" "${filters[@]}" || status=$?
    ;;
esac
wineserver -k >/dev/null 2>&1 || true
exit $status
