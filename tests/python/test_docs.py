"""Every Python block of README.md and docs/*.md runs as written (one test per block, id
file:line), and the README's C++ block is an excerpt of a program ctest runs.

A block that needs a GPU has the line ``<!-- test: gpu -->`` just above its opening fence and is
skipped without one; a block that needs a multi-process launcher has ``<!-- test: skip-reason
<why> -->`` there and is always skipped, with that reason. Nothing else is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!--\s*test:\s*(gpu|skip-reason\s+(?P<reason>.+?))\s*-->$")
FENCE = re.compile(r"^```(?P<lang>\S*)\s*$")


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None  # None, "gpu" or "skip-reason ..."

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, each with the test marker on the line above it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m["lang"]
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            i += 1
        if i == len(lines):
            raise AssertionError(f"{path}:{start + 1}: unclosed code block")
        above = lines[start - 1].strip() if start else ""
        marker = above[above.index(":") + 1 : -3].strip() if MARKER.match(above) else None
        if above.startswith("<!-- test") and marker is None:
            raise AssertionError(f"{path}:{start}: unknown test marker {above!r}")
        found.append(Block(path, start + 1, lang, "\n".join(lines[start + 1 : i]), marker))
        i += 1
    return found


ALL = [b for p in DOCS for b in blocks(p)]
PYTHON = [b for b in ALL if b.lang in ("python", "py", "pycon")]


def _param(b: Block):
    marks = []
    if b.marker == "gpu":
        marks.append(pytest.mark.gpu)
    elif b.marker is not None:
        reason = MARKER.match(f"<!-- test: {b.marker} -->")["reason"]
        marks.append(pytest.mark.skip(reason=reason))
    return pytest.param(b, id=b.id, marks=marks)


def test_docs_have_python_blocks():
    assert len(PYTHON) >= 5, [b.id for b in PYTHON]
    for b in ALL:
        assert b.lang, f"{b.id}: a code block names its language (```python, ```cpp, ```sh)"
        assert b.marker is None or b.lang in ("python", "py"), f"{b.id}: markers are for Python"


@pytest.mark.parametrize("block", [_param(b) for b in PYTHON])
def test_doc_block_runs(block: Block):
    # Line numbers in a traceback are the Markdown file's.
    source = "\n" * block.line + block.code
    code = compile(source, str(block.path), "exec")
    exec(code, {"__name__": f"doc_block_{block.line}"})


def _code_lines(text: str) -> list[str]:
    return [s for s in (line.strip() for line in text.splitlines()) if s]


def test_readme_cpp_block_is_the_quickstart_program():
    """README's C++ block is an excerpt of examples/cpp/quickstart.cpp (built and run by ctest):
    its lines appear there, in order."""
    (cpp,) = [b for b in ALL if b.path.name == "README.md" and b.lang == "cpp"]
    program = _code_lines((ROOT / "examples" / "cpp" / "quickstart.cpp").read_text())
    pos = 0
    for line in _code_lines(cpp.code):
        try:
            pos = program.index(line, pos) + 1
        except ValueError:
            pytest.fail(f"{cpp.id}: {line!r} is not in examples/cpp/quickstart.cpp (in this order)")
