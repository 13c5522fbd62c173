"""Which mode a parsed scenario document asks for: ``request`` (the event loop) or ``token`` (token serving).

Apart from :mod:`workbench.serving.scenario` so that reading a request-mode scenario does not
import the token-serving configuration.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import ConfigError, check_one_of

MODES = ("request", "token")


def serving_mode(data: dict[str, Any]) -> str:
    """``request`` or ``token``: the mode a parsed scenario document asks for."""
    serving = data.get("serving", {})
    if not isinstance(serving, dict):
        raise ConfigError("serving", serving, "must be a table")
    mode = serving.get("mode", "request")
    check_one_of("serving.mode", mode, MODES)
    return mode
