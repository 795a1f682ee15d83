"""docs/architecture.md stays true: every file its op table names exists, and so does every
repository path it spells out in backticks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
# The folder each column of the op table is relative to (the tests column names its own).
COLUMN_BASE = {1: "python/gpula", 2: "python/src", 3: "src", 4: "src", 5: "src", 6: "src"}


def _expand(pattern: str) -> list[str]:
    """a/{b,c}.cpp -> [a/b.cpp, a/c.cpp]."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",")
            for x in _expand(pattern[:m.start()] + alt + pattern[m.end():])]


def _table_paths() -> list[tuple[str, str]]:
    """(op, path) for every file named in the op table, relative to the repository."""
    out = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or cells[0] in ("op", "---"):
            continue
        for col, cell in enumerate(cells[1:], start=1):
            prev_dir = ""
            for item in re.split(r",\s*(?![^{]*\})|;\s*", cell):
                item = re.sub(r"\s*\(.*?\)\s*$", "", item.strip()).strip()  # "(k=: ...)" notes
                if not item or item == "-":
                    continue
                if "/" not in item and prev_dir and not item.startswith("test_"):
                    item = prev_dir + "/" + item  # "cache.cpp" after "matmul/matmul.cpp"
                if col == 7:
                    base = "tests/python" if item.startswith("test_") else "tests/cpp"
                else:
                    base = COLUMN_BASE[col]
                if "/" in item:
                    prev_dir = item.rsplit("/", 1)[0]
                out += [(cells[0], f"{base}/{p}") for p in _expand(item)]
    return out


def test_op_table_names_existing_files():
    paths = _table_paths()
    assert len(paths) > 60, "the op table was not found or not parsed"
    missing = [f"{op}: {p}" for op, p in paths if not list(ROOT.glob(p))]
    assert not missing, "docs/architecture.md names files that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize("prefix", ["src/", "tests/", "python/", "cmake/", "bench/", "scripts/"])
def test_backticked_paths_exist(prefix):
    text = DOC.read_text(encoding="utf-8")
    named = {m for m in re.findall(r"`(" + re.escape(prefix) + r"[\w./{},*-]+)`", text)}
    missing = [p for p in sorted(named)
               if not any(list(ROOT.glob(x.rstrip("/"))) for x in _expand(p))]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
