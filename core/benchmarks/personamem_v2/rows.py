"""What the PersonaMem-v2 importer and its result-CSV reader share: the columns of the released
benchmark CSV, reading its Python-literal ``user_query`` cell without evaluating it, the key that
ties a result row back to its stored question, and the 1,024-token distance bins of the official
summary (``inference.py`` @ 6a36975f; ../shared/reference/personamem-v2/PROTOCOL.md §2.1, §3.3, §3.6).
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager

SIZES = ("32k", "128k")
#: Columns a row must have for prefscope to build its questions (the others are kept when present).
REQUIRED = (
    "persona_id",
    "chat_history_32k_link",
    "user_query",
    "correct_answer",
    "incorrect_answers",
    "preference",
    "distance_from_related_snippet_to_query_32k",
)
#: Columns kept in ``Query.meta`` as given (labels the official summary breaks accuracy down by).
LABELS = (
    "topic_query",
    "topic_preference",
    "conversation_scenario",
    "pref_type",
    "who",
    "updated",
    "prev_pref",
    "sensitive_info",
)
BIN_WIDTH = 1024


def link_column(size: str) -> str:
    return f"chat_history_{size}_link"


def distance_column(size: str) -> str:
    return f"distance_from_related_snippet_to_query_{size}"


def parse_user_query(cell: str) -> dict:
    """``evaluate_row`` step 1: JSON, else a Python literal (``ast.literal_eval`` reads literals
    only, it evaluates no code), else ``{"role": "user", "content": <cell, quotes stripped>}``."""
    value: object = None
    try:
        value = json.loads(cell)
    except ValueError:
        try:
            value = ast.literal_eval(cell.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            value = None
    if isinstance(value, dict) and "content" in value:
        return value
    return {"role": "user", "content": cell.strip().strip("'\"")}


def content_text(content: object) -> str:
    """A message content as text: a string as is; a multimodal list reduced to its text parts
    joined by single spaces (the Gemini client's reduction, §3.4); images are not carried."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return " ".join(p for p in parts if isinstance(p, str))
    return "" if content is None else str(content)


def image_count(content: object) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for p in content if isinstance(p, dict) and p.get("type") == "image_url")


def row_key(persona_id: str, user_query: str, correct_answer: str) -> str:
    """A row's identity (the CSV has no id column): the same cells in the benchmark CSV and in the
    result CSV (which repeats every input column) give the same key. Ours."""
    raw = "\x1f".join((persona_id.strip(), user_query, correct_answer))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:12]


def number(text: str | None) -> int | float | None:
    """A CSV number cell: ``1234`` and ``1234.0`` (pandas writes a column with blanks as floats)
    are both the whole number 1234."""
    t = (text or "").strip()
    if not t:
        return None
    try:
        n = float(t)
    except ValueError:
        return None
    return int(n) if n.is_integer() else n


def distance_bin(value: object) -> str:
    """The official summary's label: ``<lo>-<lo+1023>`` with ``lo = (d // 1024) * 1024``; a value
    that is not a whole number keeps its own label, an absent one is ``(none)``."""
    if isinstance(value, bool) or value is None or value == "":
        return "(none)"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        lo = (value // BIN_WIDTH) * BIN_WIDTH
        return f"{lo}-{lo + BIN_WIDTH - 1}"
    return str(value)


def bin_order(label: str) -> tuple[int, float, str]:
    """Sort key: numeric bins by their lower bound, then other labels, ``(none)`` last."""
    head = label.split("-", 1)[0]
    try:
        return (0, float(head), label)
    except ValueError:
        return (1 if label != "(none)" else 2, 0.0, label)


@contextmanager
def wide_cells(limit: int) -> Iterator[None]:
    """Let the csv module read cells up to ``limit`` characters (a row's persona and evidence
    snippet exceed its 128 KiB default), restoring the previous limit afterwards."""
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, min(limit, 2**31 - 1)))
    try:
        yield
    finally:
        csv.field_size_limit(old)
