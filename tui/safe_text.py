"""Untrusted text (imported data, model answers) as something a view can show without acting.

``safe_text`` gives a ``rich.text.Text`` (never parsed as markup); ``safe_markup`` gives a string to
splice into markup. Both pass the text through ``core.text.terminal_safe`` first, so escape
sequences show as ``\\x1b…`` instead of reaching the terminal.
"""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text

from core.text.terminal_safe import terminal_safe


def safe_text(text: object, style: str = "") -> Text:
    """``text`` as a rich Text, controls made visible, markup left literal."""
    return Text(terminal_safe(str(text)), style=style)


def safe_markup(text: object) -> str:
    """``text`` ready to put inside a markup string: controls made visible, ``[`` escaped."""
    return escape(terminal_safe(str(text)))
