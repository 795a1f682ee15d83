"""gpula's C++ messages go to ``logging.getLogger("gpula")``."""

import logging
from typing import Union

from . import _gpula
from ._gpula import DTypeError, InvalidArgument

logger = logging.getLogger("gpula")
_synced = [_gpula.log_level()]
_OFF = 100  # the C++ level that lets nothing through (above logging.CRITICAL)


def sync_level() -> None:
    """Lowers or raises the C++ level to the Python logger's effective level (cheap).

    The logger's level may be any int (``logger.setLevel`` takes them all): the C++ core gets it
    clamped to [0, 100].
    """
    level = logger.getEffectiveLevel()
    if level != _synced[0]:
        _gpula.set_log_level(min(max(level, 0), _OFF))
        _synced[0] = level


def _level_value(level: Union[int, str]) -> int:
    if isinstance(level, str):
        value = logging.getLevelName(level.upper())
        if not isinstance(value, int):
            raise InvalidArgument(
                f"[set_log_level] unknown level name '{level}'; expected DEBUG, INFO, WARNING, "
                "ERROR or CRITICAL"
            )
        return value
    if not isinstance(level, int) or isinstance(level, bool):
        raise DTypeError(
            f"[set_log_level] level must be an int or a level name, got {type(level).__name__}"
        )
    if not 0 <= level <= _OFF:
        raise InvalidArgument(
            f"[set_log_level] level must be between 0 (logging.NOTSET) and {_OFF} (off), "
            f"got {level}"
        )
    return level


def set_log_level(level: Union[int, str]) -> None:
    """Sets the level of gpula's logger (``logging.getLogger("gpula")``) and of the C++ core.

    ``level`` is one of logging's levels, as an int (0 to 100; above logging.CRITICAL nothing
    is logged) or a name ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"). It is checked
    before anything changes: a bad level raises gl.InvalidArgument (gl.DTypeError for a wrong
    type) and leaves the level as it was. Messages below the level are not even formatted in
    C++.

    Example:
        >>> import gpula as gl
        >>> gl.set_log_level("INFO")     # plan decisions, fallbacks
        >>> gl.set_log_level("WARNING")  # the default
    """
    value = _level_value(level)
    logger.setLevel(value)
    sync_level()
