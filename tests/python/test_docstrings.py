"""The examples in the public docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "gpula",
    "gpula._matmul",
    "gpula._options",
    "gpula._log",
    "gpula.errors",
    "gpula.sparse._products",
    "gpula.sparse._iterative",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
