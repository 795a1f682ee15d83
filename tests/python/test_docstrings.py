"""Every public module, function and class of gpula carries a small runnable example in its
docstring (the project's rule), and every docstring example of the package runs and prints what
it says.

Public: the modules gpula, gpula.linalg, gpula.sparse, gpula.sparse.linalg, gpula.distributed
and gpula.errors, and each callable name in their ``__all__``: functions and classes (enums
included). Two kinds of class are shown elsewhere and need no example of their own: exception
classes (gpula.errors' example walks the hierarchy, and the functions' examples raise them) and
the named-tuple results (SVDResult, ...: the functions that return them show them). Examples run
in a fresh namespace: each imports what it uses.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import pkgutil

import pytest

import gpula

PUBLIC_MODULES = [
    "gpula",
    "gpula.linalg",
    "gpula.sparse",
    "gpula.sparse.linalg",
    "gpula.distributed",
    "gpula.errors",
]
if importlib.util.find_spec("torch") is not None:  # gpula.torch needs torch; CI installs it
    PUBLIC_MODULES += ["gpula.torch", "gpula.torch.nn", "gpula.torch.functional",
                       "gpula.torch.linalg", "gpula.torch.optim"]
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def shown_elsewhere(obj: object) -> bool:
    """An exception class or a named-tuple result type (see the module docstring)."""
    if not isinstance(obj, type):
        return False
    return issubclass(obj, BaseException) or (issubclass(obj, tuple) and hasattr(obj, "_fields"))


def public_objects() -> dict[str, object]:
    """Qualified name -> object, each object once (under the first name that reaches it)."""
    found: dict[str, object] = {}
    seen: set[int] = set()

    def add(name: str, obj: object) -> None:
        if id(obj) not in seen:
            seen.add(id(obj))
            found[name] = obj

    for mod_name in PUBLIC_MODULES:
        module = importlib.import_module(mod_name)
        add(mod_name, module)
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and not shown_elsewhere(obj):
                add(f"{mod_name}.{name}", obj)
    return found


PUBLIC = public_objects()


def _run(tests: list[doctest.DocTest]) -> tuple[int, str]:
    """Runs the examples; returns (examples run, the report of the failures)."""
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    for t in tests:
        runner.run(t, out=report.append)
    return sum(len(t.examples) for t in tests), "".join(report)


@pytest.mark.parametrize("name", list(PUBLIC))
def test_public_api_has_a_runnable_example(name: str):
    obj = PUBLIC[name]
    if inspect.ismodule(obj):
        # The module's own docstring; its functions and classes are tested by their own names.
        tests = doctest.DocTestFinder(recurse=False).find(obj, name, module=obj, globs={})
    else:
        # A function, or a class with its methods; module=False: not filtered by defining module.
        tests = doctest.DocTestFinder().find(obj, name, module=False, globs={})
    count, failures = _run(tests)
    assert count > 0, f"{name} has no docstring example (>>> ...): every public API carries one"
    assert not failures, failures


def package_modules() -> list[str]:
    names = ["gpula"]
    for info in pkgutil.walk_packages(gpula.__path__, prefix="gpula."):
        names.append(info.name)
    return names


@pytest.mark.parametrize("name", package_modules())
def test_module_docstring_examples_run(name: str):
    """Every module of the package, private ones included: the examples of its docstring and of
    the functions and classes it defines (as doctest.testmod finds them)."""
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module, name, module=module, globs={})
    _, failures = _run(tests)
    assert not failures, failures
