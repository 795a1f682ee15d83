"""Writes the type stub of the built extension with nanobind's stubgen (run by CMake after each
link of _gpula, and by tests/python/test_typing.py to check the installed stub).

    python make_stub.py <folder holding the _gpula extension> <output .pyi>

_gpula creates gpula's exception classes and names them ``gpula.<Name>`` (their ``__module__``
is the package that re-exports them), so stubgen takes them for imports from ``gpula`` and
leaves them out; but the package imports them from _gpula, so the stub must define them. In
this process only, each exception class of _gpula is marked as _gpula's own before stubgen runs.
"""

from __future__ import annotations

import importlib
import sys

from nanobind import stubgen

STRICT_HEADER = '# mypy: disable-error-code="type-arg"\n'

# Where the built module cannot be imported on the build machine (e.g. a cuSOLVERMp build, which
# needs the driver's libcuda.so.1, on a machine without a GPU driver), the build still succeeds
# with this stub: every name is Any. tests/python/test_typing.py fails on such a stub wherever
# the module can be imported, so it does not go unnoticed.
FALLBACK = """{header}# Fallback stub: the module could not be imported when it was built ({reason}).
from typing import Any

def __getattr__(name: str) -> Any: ...
"""


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit(f"usage: {sys.argv[0]} <folder holding _gpula> <output .pyi>")
    folder, output = argv
    sys.path.insert(0, folder)
    try:
        module = importlib.import_module("_gpula")
    except ImportError as e:
        reason = " ".join(str(e).split())
        print(f"make_stub.py: warning: cannot import _gpula ({reason}); writing a fallback stub",
              file=sys.stderr)  # fmt: skip
        with open(output, "w", encoding="utf-8") as f:
            f.write(FALLBACK.format(header=STRICT_HEADER, reason=reason))
        return
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, BaseException):
            value.__module__ = module.__name__
    stubgen.main(["-q", "-m", module.__name__, "-o", output])
    with open(output, encoding="utf-8") as f:
        text = f.read()
    # Bindings that take or return nb::tuple / nb::dict / nb::list appear as bare ``tuple``,
    # ``dict``, ``list`` (any contents: what they are); mypy --strict would report each one
    # wherever gpula is not an installed package (a checkout on MYPYPATH).
    text = STRICT_HEADER + text
    # stubgen skips __version__ (on its list of standard module attributes); gpula re-exports it.
    if isinstance(getattr(module, "__version__", None), str):
        text += "\n__version__: str\n"
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
