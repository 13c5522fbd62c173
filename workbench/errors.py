"""The one error type for bad configuration, shared by every stage.

A :class:`ConfigError` names the key, the value and why it is refused; the scenario
loader adds the file name, and the CLI prints it on one line and exits with status 2.
"""

from __future__ import annotations

import math
import reprlib

MAX_SHOWN = 80  # characters of a value shown in a message; a longer one is cut with "..."


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ConfigError(ValueError):
    """A configuration value out of range: names the key, the value (cut to 80 characters) and why."""

    def __init__(self, key: str, value: object, why: str, source: str = ""):
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{key} = {shorten(_repr(value))}: {why}")
        self.key, self.value, self.why, self.source = key, value, why, source

    def __reduce__(self):
        """Rebuild from the four fields, so the error survives a worker process (sweeps)."""
        return ConfigError, (self.key, self.value, self.why, self.source)

    def under(self, prefix: str) -> ConfigError:
        """The same error with its key nested under ``prefix``."""
        key = f"{prefix}.{self.key}" if prefix else self.key
        return ConfigError(key, self.value, self.why, self.source)

    def in_file(self, source: str) -> ConfigError:
        """The same error attributed to the file ``source``."""
        return ConfigError(self.key, self.value, self.why, source)


def _repr(value: object) -> str:
    """A bounded repr: reprlib cuts long strings, numbers, lists and deep nesting before they are built."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"<an integer of {value.bit_length()} bits>"
    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxtuple, r.maxdict, r.maxlong = 3, 12, 12, 8, 40
    r.maxstring = r.maxother = MAX_SHOWN
    return r.repr(value)


def check(ok: bool, key: str, value: object, why: str) -> None:
    """Raise a :class:`ConfigError` unless ``ok``."""
    if not ok:
        raise ConfigError(key, value, why)


def check_positive(key: str, value: float) -> None:
    """``value`` must be a finite number > 0."""
    check(math.isfinite(value) and value > 0, key, value, "must be a finite number > 0")


def check_non_negative(key: str, value: float) -> None:
    """``value`` must be a finite number >= 0."""
    check(math.isfinite(value) and value >= 0, key, value, "must be a finite number >= 0")


def check_one_of(key: str, value: str, choices: tuple[str, ...]) -> None:
    """``value`` must be one of ``choices``."""
    check(value in choices, key, value, f"must be one of {', '.join(choices)}")
