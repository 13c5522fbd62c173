"""Terminal safety: text from user input is printed with its control characters escaped.

Scenario names, descriptions, stream names, drill fields, answers quoted back as
evidence and file names can carry ANSI/OSC escape sequences or other control
characters that would move the cursor, retitle the window or hide text. Every text
the CLI prints goes through :func:`printable`, which writes them as visible escapes.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and Unicode's line separators and bidi overrides
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LINE = re.compile("[\t\n]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str, one_line: bool = False) -> str:
    """``text`` with control characters escaped (``\\x1b`` for ESC); ``one_line`` escapes tab and newline too."""
    text = _CONTROL.sub(_escape, str(text))
    return _LINE.sub(_escape, text) if one_line else text
