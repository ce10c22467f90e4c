"""Run Python as an install without some packages would: ``python tests/without_modules.py
torch,numpy -- -m nmt translate --help`` (or ``-- -c CODE``). Importing a refused package raises
ModuleNotFoundError naming it, as it would where the package is not installed, so a light path
that imports a heavy module fails here even though the package is installed."""
from __future__ import annotations

import runpy
import sys
from importlib.abc import MetaPathFinder

REFUSED_MARK = "refused: not in this install"


class Refuse(MetaPathFinder):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} ({REFUSED_MARK})", name=fullname)
        return None


def main(argv: list[str]) -> None:
    refused, separator, *rest = argv
    if separator != "--" or not rest or rest[0] not in ("-m", "-c"):
        raise SystemExit("usage: without_modules.py NAME[,NAME...] -- (-m MODULE | -c CODE) [ARGS...]")
    names = {name for name in refused.split(",") if name}
    already = sorted(names & {name.split(".")[0] for name in sys.modules})
    if already:
        raise SystemExit(f"already imported before the guard: {already}")
    sys.meta_path.insert(0, Refuse(names))
    mode, target, *args = rest
    if mode == "-c":
        sys.argv = ["-c", *args]
        exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = [target, *args]
        runpy.run_module(target, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
