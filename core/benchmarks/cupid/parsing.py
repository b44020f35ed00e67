"""CUPID's own reply-parsing rules (github.com/kixlab/CUPID @ a8560cab), deliberately NOT robust:
the official code's JSON cut and score heading, so scores match CUPID's, failures included.
prefscope's robust parsing for every other judge is :mod:`core.judges.parsing`."""

from __future__ import annotations

import json
from typing import Any


def cupid_parse_json(text: str) -> Any:
    """CUPID's ``utils/parsing.py`` parse_json: after the first ```` ```json ````, cut at the last
    ```` ``` ````, strip, ``json.loads``; without that marker, ``json.loads`` of the stripped text.
    No other repair: any failure raises (``json.JSONDecodeError``)."""
    if "```json" in text:
        text = text.split("```json", 1)[1].rsplit("```", 1)[0]
    return json.loads(text.strip())


CUPID_SCORE_HEADINGS = ("### **Evaluation Score**", "### Evaluation Score")


def cupid_score_text(text: str) -> str | None:
    """``ResponseJudger.process_output``: the text after the first heading that occurs (bold form
    first), up to its second occurrence, stripped; None when neither heading occurs."""
    for heading in CUPID_SCORE_HEADINGS:
        if heading in text:
            return text.split(heading)[1].strip()
    return None


def parse_cupid_score(text: str) -> float:
    """CUPID's score of a judge reply (``process_generation_result``); never fails: no heading or an
    unreadable value is 0. Strip, cut at the first ``/``, ``.`` and blank line, drop ``**``,
    ``float()``: ``9/10`` → 9, ``7.5`` → 7, ``**7**`` → 7. No clamping to the 1–10 scale."""
    value = cupid_score_text(text)
    if value is None:
        return 0.0
    value = value.strip()
    for cut in ("/", ".", "\n\n"):
        value = value.split(cut, 1)[0]
    try:
        return float(value.replace("**", ""))
    except ValueError:
        return 0.0
