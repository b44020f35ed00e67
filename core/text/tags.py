"""XML-ish tags in model replies, read as PrefEval reads them: BeautifulSoup's ``html.parser``.

PrefEval's official code parses judge replies (``<answer>``, ``<preference>``, ``<explanation>``)
and MCQ replies (``<choice>``) with BeautifulSoup, whose leniency is part of the protocol: an
unclosed tag extends to the end of the text, entities are decoded, tag names are case-insensitive,
and ``.string`` is None when an element has more than one child. Using the same parser keeps
prefscope's reading identical to the official one, quirks included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # bs4 is imported on the first parse: start-up paths that only import this module skip it
    from bs4 import Tag


def _first(text: str, tag: str) -> Tag | None:
    from bs4 import BeautifulSoup, Tag

    found = BeautifulSoup(text, "html.parser").find(tag)
    return found if isinstance(found, Tag) else None


def first_tag_text(text: str, tag: str) -> str:
    """The stripped text of the first ``<tag>`` element, or "" when there is none (PrefEval's
    ``parse_explanation_and_answer`` / ``parse_preference_and_answer``)."""
    found = _first(text, tag)
    return found.get_text().strip() if found is not None else ""


def first_tag_string(text: str, tag: str) -> str | None:
    """BeautifulSoup ``.string`` of the first ``<tag>`` element: its text when it has exactly one
    text child (or one nested element with one), else None; None when there is no element."""
    found = _first(text, tag)
    if found is None or found.string is None:
        return None
    return str(found.string)
