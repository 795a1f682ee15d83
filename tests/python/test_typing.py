"""gpula's types, as a type checker sees them: the extension's stub (generated at build time by
python/make_stub.py with nanobind's stubgen) parses and matches the built module, and a user
script over the documented API passes ``mypy --strict`` and runs."""

from __future__ import annotations

import ast
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

import gpula
from gpula import _gpula

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("typing_user_script.py")
STUB = Path(_gpula.__file__).with_name("_gpula.pyi")


def _stub_text() -> str:
    if not STUB.is_file():
        pytest.fail(
            f"no stub next to the extension ({STUB}): the build writes it beside _gpula "
            "(a development checkout builds the target _gpula_stub and links "
            "build-dev/python/_gpula.pyi into python/gpula/)"
        )
    return STUB.read_text(encoding="utf-8")


def _defined(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """Names a stub body defines (functions, classes, annotated or assigned names)."""
    out: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            out.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    return out


def test_stub_parses_and_defines_every_public_name():
    tree = ast.parse(_stub_text(), filename=str(STUB))
    top = _defined(tree.body)
    public = [n for n in dir(_gpula) if not n.startswith("_")] + ["__version__"]
    missing = [n for n in public if n not in top]
    assert not missing, f"the stub lacks {missing}"
    for name in public:
        value = getattr(_gpula, name)
        if not isinstance(value, type):
            continue
        node = top[name]
        assert isinstance(node, ast.ClassDef), f"{name} is a class, the stub says otherwise"
        members = _defined(node.body)
        own = [m for m in vars(value) if not m.startswith("_")]
        assert not [m for m in own if m not in members], f"the stub's {name} lacks members"
        if issubclass(value, BaseException):  # bases, as the runtime class has them
            bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
            assert bases == [b.__name__ for b in value.__bases__], name


def test_stub_matches_the_built_module(tmp_path):
    """The installed stub is what stubgen writes for the module that is installed beside it."""
    fresh = tmp_path / "_gpula.pyi"
    subprocess.run(
        [sys.executable, str(ROOT / "python" / "make_stub.py"), str(STUB.parent), str(fresh)],
        check=True,
        timeout=300,
    )
    assert fresh.read_text(encoding="utf-8") == _stub_text(), (
        f"{STUB} is stale: rebuild (target _gpula_stub, or pip install .)"
    )


def _mypy_env() -> dict[str, str]:
    """MYPYPATH names the folder gpula is imported from unless that is site-packages (where
    mypy finds installed packages itself, and refuses them on MYPYPATH). No PYTHONPATH: mypy
    takes its folders for installed packages, whose findings it does not report, so gpula's own
    stub would go unchecked."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    parent = Path(gpula.__file__).resolve().parent.parent
    installed = {Path(p).resolve() for p in [*site.getsitepackages(), site.getusersitepackages()]}
    if parent not in installed:
        env["MYPYPATH"] = str(parent)
    return env


def test_user_script_passes_mypy_strict(request, tmp_path):
    pytest.importorskip("mypy")  # make test installs it; a machine without it (the GPU host) skips
    # pytest's cache keeps mypy's between runs (a cold run takes minutes); tmp_path without it.
    cache = request.config.cache.mkdir("mypy") if request.config.pluginmanager.has_plugin(
        "cacheprovider"
    ) else tmp_path
    # follow-imports=silent: the script is checked against gpula's types, as with an installed
    # package, without reporting findings inside gpula itself.
    cmd = [
        sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
        "--cache-dir", str(cache), "--python-executable", sys.executable, str(SCRIPT),
    ]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, env=_mypy_env(), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_user_script_runs():
    r = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(gpula.__file__).parent.parent)},
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "typing_user_script: ok" in r.stdout


def test_stub_falls_back_when_the_module_cannot_load(tmp_path):
    """A build machine that cannot import the module (a cuSOLVERMp build without a GPU driver)
    still gets a valid stub, every name Any, and a warning; the build does not fail."""
    (tmp_path / "_gpula.py").write_text("import gpula_missing_shared_library\n")
    out = tmp_path / "_gpula.pyi"
    r = subprocess.run(
        [sys.executable, str(ROOT / "python" / "make_stub.py"), str(tmp_path), str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "cannot import _gpula" in r.stderr and "gpula_missing_shared_library" in r.stderr
    tree = ast.parse(out.read_text(encoding="utf-8"))
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["__getattr__"]
