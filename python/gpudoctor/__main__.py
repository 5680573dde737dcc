"""``python -m gpudoctor ARGS``: runs the installed gpudoctor binary with ARGS and exits with its
status (0 healthy, 1 unfit, 2 gpudoctor failed; 130/143 when interrupted)."""

import os
import subprocess
import sys

from gpudoctor import find_gpudoctor_bin


def main() -> int:
    try:
        exe = find_gpudoctor_bin()
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    if os.name == "nt":
        # No exec on Windows: run it and pass its status through; Ctrl-C reaches both.
        try:
            return subprocess.call([exe, *sys.argv[1:]])
        except KeyboardInterrupt:
            return 130
    # The binary replaces this interpreter: signals, stdin and the exit status are its own, and
    # current_exe() is the installed binary, so the environment it sits in is judged first.
    os.execv(exe, [exe, *sys.argv[1:]])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
