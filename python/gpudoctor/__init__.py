"""gpudoctor: a doctor for NVIDIA GPU machines.

The wheel carries the Rust binary in the environment's scripts folder (``bin/gpudoctor``,
``Scripts\\gpudoctor.exe``); this package only finds it, for ``python -m gpudoctor``.
"""

import os
import sys
import sysconfig

__all__ = ["find_gpudoctor_bin"]


def find_gpudoctor_bin() -> str:
    """The path of the gpudoctor binary installed with this package."""
    exe = "gpudoctor" + (sysconfig.get_config_var("EXE") or "")
    if os.name == "nt" and not exe.endswith(".exe"):
        exe += ".exe"
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        # The scripts folder of the scheme this package was installed with (a venv, conda,
        # the system).
        sysconfig.get_path("scripts"),
        # pip install --user.
        sysconfig.get_path("scripts", scheme=_user_scheme()),
        # pip install --target DIR: the scripts sit in DIR/bin.
        os.path.join(os.path.dirname(here), "bin"),
        # pip install --prefix PREFIX: PREFIX/lib/pythonX.Y/site-packages/gpudoctor -> PREFIX/bin.
        os.path.join(here, os.pardir, os.pardir, os.pardir, os.pardir, "bin"),
    ]
    for d in candidates:
        if d:
            p = os.path.join(d, exe)
            if os.path.isfile(p):
                return os.path.normpath(p)
    raise FileNotFoundError(
        "gpudoctor: the binary is not in %s; reinstall with `pip install --force-reinstall gpudoctor`"
        % ", ".join(os.path.normpath(d) for d in candidates if d)
    )


def _user_scheme() -> str:
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", ""):
        return "osx_framework_user"
    return "posix_user"
