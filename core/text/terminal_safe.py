"""Make untrusted text (imported data, model answers, error bodies) inert on a terminal.

Every view shows data through :func:`terminal_safe` (:func:`one_line` for one-line fields) and
then through ``rich.text.Text`` or ``rich.markup.escape``. C0 controls (but newline and tab), DEL,
C1 controls and bidi overrides become visible escapes such as ``\\x1b`` or ``\\u202e``: an OSC 52
(clipboard write), OSC 0 (window title), CSI 2J (clear screen) or 8-bit CSI (``\\x9b``) then prints
as plain characters instead of acting, and the researcher still sees that the data holds them.
Export files never use this: they stay verbatim (an export printed on a terminal does).
"""

from __future__ import annotations

import re

# C0 without \t (09) and \n (0a), DEL, C1. \r is shown too: a bare \r rewrites the line. And the
# bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): a right-to-left
# override makes the text after it read backwards (``exe.txt`` shown for ``txt.exe``).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: The same, plus newline and tab: for a field shown on one line (an id, a name in a table cell).
_CONTROL_OR_BREAK = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab shown as ``\\xNN``.

    Windows line ends (``\\r\\n``) become ``\\n``. Text without controls is returned as is, so
    the common case costs one regex scan.
    """
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_visible, text.replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """:func:`terminal_safe` for a field shown on one line: newline and tab shown as ``\\x0a`` and
    ``\\x09`` too, so an id holding a newline cannot print a row of its own."""
    if _CONTROL_OR_BREAK.search(text) is None:
        return text
    return _CONTROL_OR_BREAK.sub(_visible, text)
