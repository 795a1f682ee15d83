"""gpula's C++ messages go to ``logging.getLogger("gpula")``."""

import logging
from typing import Union

from . import _gpula

logger = logging.getLogger("gpula")
_synced = [_gpula.log_level()]


def sync_level() -> None:
    """Lowers or raises the C++ level to the Python logger's effective level (cheap)."""
    level = logger.getEffectiveLevel()
    if level != _synced[0]:
        _gpula.set_log_level(level)
        _synced[0] = level


def set_log_level(level: Union[int, str]) -> None:
    """Sets the level of gpula's logger (``logging.getLogger("gpula")``) and of the C++ core.

    Messages below the level are not even formatted in C++.

    Example:
        >>> import gpula as gl
        >>> gl.set_log_level("INFO")     # plan decisions, fallbacks
        >>> gl.set_log_level("WARNING")  # the default
    """
    if isinstance(level, str):
        value = logging.getLevelName(level.upper())
        if not isinstance(value, int):
            raise ValueError(f"[set_log_level] unknown level '{level}'")
        level = value
    if not isinstance(level, int) or isinstance(level, bool):
        raise TypeError(
            f"[set_log_level] level must be an int or a name, got {type(level).__name__}"
        )
    logger.setLevel(level)
    sync_level()
