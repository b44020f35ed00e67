"""Textual's built-in theme names, read without importing Textual.

``import textual.theme`` costs ~0.5 s (it pulls in most of Textual), too much for every CLI command
that only validates the ``theme`` setting; the names are read from the module's source instead.
A test checks them against ``textual.theme.BUILTIN_THEMES``.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

_ENTRY = re.compile(r'^    "([a-z0-9-]+)": Theme\(', re.MULTILINE)


@functools.cache
def theme_names() -> frozenset[str]:
    spec = importlib.util.find_spec("textual")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        source = Path(folder) / "theme.py"
        if source.is_file():
            names = frozenset(_ENTRY.findall(source.read_text(encoding="utf-8")))
            if names:
                return names
    from textual.theme import BUILTIN_THEMES  # the source changed shape: pay for the import

    return frozenset(BUILTIN_THEMES)


def theme_problem(theme: str) -> str | None:
    """Why the ``theme`` setting cannot be used, naming the key; None when it can."""
    from core.settings import did_you_mean

    names = theme_names()
    if theme in names:
        return None
    return (
        f"setting 'theme': unknown theme {theme!r}{did_you_mean(theme, sorted(names))}; "
        f"available: {', '.join(sorted(names))}"
    )
