"""Messages from C++ reach Python's logging: a per-call logger, and logging.getLogger("gpula")."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import gpula as gl


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _logger(name):
    log = logging.getLogger(name)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    cap = Capture()
    log.addHandler(cap)
    return log, cap


def test_logger_option_receives_plan_message():
    log, cap = _logger("test_gpula.per_call")
    gl.matmul_cache_clear()  # a cache hit would not plan
    a = np.ones((7, 3), np.float32)
    gl.matmul(a, a.T, options={"logger": log})
    messages = [r.getMessage() for r in cap.records]
    assert any("[matmul] planned" in m and "float32" in m for m in messages), messages
    assert all(r.name == "test_gpula.per_call" for r in cap.records)
    assert cap.records[0].levelno == logging.INFO


def test_logger_option_on_matmul_object():
    log, cap = _logger("test_gpula.object")
    a = np.ones((5, 6))
    with gl.Matmul(a, a.T, options=gl.MatmulOptions(logger=log)) as mm:
        mm.plan(epilog=gl.Epilog.RELU)
    assert any("epilog RELU" in r.getMessage() for r in cap.records)


def test_global_logger_and_level():
    cap = Capture()
    log = logging.getLogger("gpula")
    log.addHandler(cap)
    try:
        gl.set_log_level("INFO")
        with gl.Matmul(np.ones((4, 4)), np.ones((4, 4))) as mm:
            mm.plan()
        assert any("[matmul] planned" in r.getMessage() for r in cap.records)
        cap.records.clear()
        gl.set_log_level(logging.WARNING)
        with gl.Matmul(np.ones((4, 4)), np.ones((4, 4))) as mm:
            mm.plan()
        assert not cap.records
    finally:
        log.removeHandler(cap)
        log.setLevel(logging.NOTSET)
        gl.set_log_level(logging.getLogger().getEffectiveLevel())
        log.setLevel(logging.NOTSET)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_broken_logger_does_not_break_the_call():
    class Broken:
        def log(self, level, msg):
            raise RuntimeError("handler failure")

    a = np.ones((3, 9))
    gl.matmul_cache_clear()
    r = gl.matmul(a, a.T, options={"logger": Broken()})
    np.testing.assert_allclose(r, a @ a.T)


@pytest.mark.parametrize(
    "bad, cls",
    [
        (2**40, gl.InvalidArgument),
        (-1, gl.InvalidArgument),
        (101, gl.InvalidArgument),
        ("LOUD", gl.InvalidArgument),
        (1.5, gl.DTypeError),
        (True, gl.DTypeError),
        (None, gl.DTypeError),
    ],
)
def test_bad_log_level_raises_and_changes_nothing(bad, cls):
    # gl.set_log_level(2**40) used to raise only after setting the Python logger's level.
    log = logging.getLogger("gpula")
    try:
        gl.set_log_level("ERROR")
        before = (log.level, log.getEffectiveLevel(), gl._gpula.log_level())
        with pytest.raises(cls, match=r"^\[set_log_level\] .*level"):
            gl.set_log_level(bad)
        assert (log.level, log.getEffectiveLevel(), gl._gpula.log_level()) == before
    finally:
        log.setLevel(logging.NOTSET)
        gl.set_log_level(logging.getLogger().getEffectiveLevel())
        log.setLevel(logging.NOTSET)


def test_log_level_bounds_and_names():
    log = logging.getLogger("gpula")
    try:
        for level, expected in ((0, 0), (100, 100), ("debug", 10), ("CRITICAL", 50)):
            gl.set_log_level(level)
            assert log.level == expected
        # A level set on the logger directly, out of the C++ range, is clamped, not an error.
        log.setLevel(2**40)
        r = gl.matmul(np.ones((2, 3)), np.ones((3, 2)))
        np.testing.assert_allclose(r, np.full((2, 2), 3.0))
        log.setLevel(-5)
        gl.matmul(np.ones((2, 3)), np.ones((3, 2)))
        assert gl._gpula.log_level() <= logging.DEBUG
    finally:
        log.setLevel(logging.NOTSET)
        gl.set_log_level(logging.getLogger().getEffectiveLevel())
        log.setLevel(logging.NOTSET)
