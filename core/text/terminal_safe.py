"""Make untrusted text (imported data, model answers, error bodies) inert on a terminal.

Every view shows data through :func:`terminal_safe` and then through ``rich.text.Text`` or
``rich.markup.escape``. C0 controls (but newline and tab), DEL and C1 controls become visible
escapes such as ``\\x1b``: an OSC 52 (clipboard write), OSC 0 (window title), CSI 2J (clear
screen) or 8-bit CSI (``\\x9b``) then prints as plain characters instead of acting, and the
researcher still sees that the data holds them. Exports never use this: they stay verbatim.
"""

from __future__ import annotations

import re

# C0 without \t (09) and \n (0a), DEL, C1. \r is shown too: a bare \r rewrites the line.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab shown as ``\\xNN``.

    Windows line ends (``\\r\\n``) become ``\\n``. Text without controls is returned as is, so
    the common case costs one regex scan.
    """
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_visible, text.replace("\r\n", "\n"))
