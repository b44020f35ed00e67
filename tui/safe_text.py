"""Untrusted text (imported data, model answers) as something a view can show without acting.

``safe_text`` gives a ``rich.text.Text`` (never parsed as markup); ``safe_markup`` gives a string to
splice into markup. Both pass the text through ``core.text.terminal_safe`` first, so escape
sequences show as ``\\x1b…`` instead of reaching the terminal.
"""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text

from core.text.terminal_safe import one_line, terminal_safe


def safe_text(text: object, style: str = "") -> Text:
    """``text`` as a rich Text, controls made visible, markup left literal."""
    return Text(terminal_safe(str(text)), style=style)


def safe_cell(text: object, style: str = "") -> Text:
    """:func:`safe_text` for a one-line field (an id, a name, a status in a table row): a newline or
    tab in it is shown escaped, so it cannot print a row of its own."""
    return Text(one_line(str(text)), style=style)


class TerminalSafeStream:
    """A text stream whose writes reach the terminal through :func:`terminal_safe` (an export
    printed on a terminal); every other method is the wrapped stream's."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def safe_markup(text: object) -> str:
    """``text`` ready to put inside a markup string: controls made visible, ``[`` escaped."""
    return escape(terminal_safe(str(text)))
