"""Robust parsing of judge-model output: a number on a scale, or a label, plus the rationale.

A judge may answer with clean JSON, JSON inside prose or a code fence, "Score: 4", "4/5",
a markdown heading followed by a number (CUPID's "### Evaluation Score"), or something we must
refuse to read. Every parse returns a :class:`Parsed` whose ``error`` says WHY it failed:

- no score at all, or a refusal ("I'm sorry, I can't evaluate …")
- a range ("3-4") or two different scores in one reply
- a score outside the scale, or a fraction on another scale ("7/10" on a 1–5 rubric)
- a non-integer on an integer scale

Numbers that merely describe the scale ("on a 1-5 scale", "(1~10)") are ignored, not read as
ranges. Nothing here guesses: an ambiguous reply is a recorded failure, never a silent number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCORE_KEYS = ("score", "rating", "evaluation_score", "final_score")
RATIONALE_KEYS = ("rationale", "reason", "reasoning", "explanation", "justification", "analysis")

_NUM = r"(\d+(?:\.\d+)?)"
_DASH = r"(?:-|–|—|~|to)"
_REFUSAL = re.compile(
    r"\b(?:i(?:'m| am) sorry|i (?:can(?:no|')t|cannot|am unable to|won't)|as an ai\b|unable to (?:evaluate|assess|score)"
    r"|i do not feel comfortable|i'm not able to)",
    re.I,
)


@dataclass(frozen=True)
class Parsed:
    """One parsed value. ``value`` is a float for scores and a canonical string for labels."""

    value: float | str | None
    rationale: str
    ok: bool
    error: str | None = None
    data: dict | None = None
    notes: list[str] = field(default_factory=list)


def fail(reason: str, rationale: str = "", data: dict | None = None) -> Parsed:
    return Parsed(None, rationale, False, reason, data)


# -- JSON ----------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


def json_objects(text: str) -> list[tuple[dict, int, int]]:
    """Every JSON object in ``text`` (fenced or bare), with its span; nested objects are not
    reported separately. Single-quoted or trailing-comma JSON is repaired minimally."""
    found: list[tuple[dict, int, int]] = []
    decoder = json.JSONDecoder()
    i = 0
    while True:
        start = text.find("{", i)
        if start < 0:
            break
        obj, end = _decode_at(decoder, text, start)
        if obj is None:
            i = start + 1
            continue
        found.append((obj, start, end))
        i = end
    return found


def _decode_at(decoder: json.JSONDecoder, text: str, start: int) -> tuple[dict | None, int]:
    try:
        obj, end = decoder.raw_decode(text, start)
        return (obj, end) if isinstance(obj, dict) else (None, start)
    except json.JSONDecodeError:
        pass
    # minimal repair: the balanced {...} with trailing commas removed
    depth, in_str, esc = 0, False, False
    for k in range(start, len(text)):
        ch = text[k]
        if in_str:
            esc = (ch == "\\") and not esc
            if ch == '"' and not esc:
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                chunk = re.sub(r",\s*([}\]])", r"\1", text[start : k + 1])
                try:
                    obj = json.loads(chunk)
                except json.JSONDecodeError:
                    return None, start
                return (obj, k + 1) if isinstance(obj, dict) else (None, start)
    return None, start


def first_json(text: str, *required: str) -> dict | None:
    """The first JSON object holding all ``required`` keys (case-insensitive), else None."""
    for obj, _, _ in json_objects(text or ""):
        keys = {k.lower() for k in obj}
        if all(r.lower() in keys for r in required):
            return obj
    return None


def get_key(obj: dict, *names: str) -> Any:
    lowered = {k.lower(): v for k, v in obj.items()}
    for n in names:
        if n in lowered:
            return lowered[n]
    return None


def _outside(text: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for s, e in sorted(spans):
        out.append(text[last:s])
        last = e
    out.append(text[last:])
    return " ".join(out)


# -- scores --------------------------------------------------------------------------------------


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _strip_scale_mentions(text: str, lo: float, hi: float) -> str:
    """Remove "1-5", "1 to 10", "(1~10)" when they are exactly the scale's bounds."""
    pat = (
        rf"[(\[]?\s*(?:scale\s+of\s+|from\s+)?(?<![\d.]){_fmt(lo)}\s*{_DASH}\s*{_fmt(hi)}(?![\d.])"
        rf"(?:\s*(?:-\s*)?(?:point\s+)?scale)?\s*[)\]]?"
    )
    return re.sub(pat, " ", text, flags=re.I)


def _json_score(value: object, lo: float, hi: float) -> tuple[float | None, str | None]:
    if isinstance(value, bool):
        return None, f"score field is a boolean ({value!r}), not a number"
    if isinstance(value, (int, float)):
        return float(value), None
    if isinstance(value, str):
        s = _strip_scale_mentions(value.strip(), lo, hi)
        if re.search(rf"{_NUM}\s*{_DASH}\s*{_NUM}", s):
            return None, f"score field gives a range ({value!r}), not one score"
        nums = re.findall(_NUM, s)
        frac = re.fullmatch(rf"\s*{_NUM}\s*(?:/|out of)\s*{_NUM}\s*", s)
        if frac:
            return _fraction(float(frac.group(1)), float(frac.group(2)), hi)
        if len(nums) == 1:
            return float(nums[0]), None
        if not nums:
            return None, f"score field holds no number ({value!r})"
        return None, f"score field holds several numbers ({value!r})"
    if value is None:
        return None, "score field is null"
    return None, f"score field has an unexpected type ({type(value).__name__})"


def _fraction(num: float, den: float, hi: float) -> tuple[float | None, str | None]:
    if den != hi:
        return None, f"score given as {_fmt(num)}/{_fmt(den)}, on a different scale than 1–{_fmt(hi)}"
    return num, None


def _text_scores(text: str, lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Scores stated in prose, and reasons to refuse (ranges, foreign fractions)."""
    t = _strip_scale_mentions(text, lo, hi).replace("**", "").replace("__", "")
    values: list[float] = []
    problems: list[str] = []
    label = r"(?:score|rating|rate|grade)"
    # ranges next to a score label: "Score: 3-4", "rating between 3 and 4", "score 3 or 4"
    for m in re.finditer(rf"\b{label}\b[^\d\n]{{0,25}}?{_NUM}\s*(?:{_DASH}|and|or)\s*{_NUM}\b", t, re.I):
        a, b = float(m.group(1)), float(m.group(2))
        if a != b:
            problems.append(f"gives a range ({_fmt(a)}–{_fmt(b)}), not one score")
    # fractions next to a score label or alone on a line: "Score: 4/5", "4 out of 5", "**4/5**"
    fraction_spans = []
    frac = rf"(?<![\d.]){_NUM}\s*(?:/|out of)\s*{_NUM}(?![\d.])"
    pattern = rf"(?:\b{label}\b[^\d\n]{{0,25}}?{frac})|(?:^[\s#>*\-]*{frac}[\s.!*]*$)"
    for m in re.finditer(pattern, t, re.I | re.M):
        num, den = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        v, err = _fraction(float(num), float(den), hi)
        fraction_spans.append((m.start(), m.end()))
        if v is None:
            problems.append(err or "unreadable fraction")
        else:
            values.append(v)
    bare = _outside(t, fraction_spans)
    # labelled scores: "Score: 4", "score of 4", "I'd rate it 4", "### Evaluation Score\n\n7"
    for m in re.finditer(
        rf"\b{label}\b(?:\s+(?:it|this|the response|of|is|would be|at|a|an|:|=|-)|[\s:#*=\-])*\s*{_NUM}(?![\d.]*\s*(?:{_DASH}|and)\s*\d)",
        bare,
        re.I,
    ):
        values.append(float(m.group(1)))
    # "I'd give it a 4"
    for m in re.finditer(rf"\bgive (?:it|this|the response) (?:a |an )?{_NUM}\b", bare, re.I):
        values.append(float(m.group(1)))
    return values, problems


def parse_score(text: str, lo: float, hi: float, *, integer: bool = True) -> Parsed:
    """The single score a judge committed to, on the scale ``lo``..``hi``."""
    if text is None or not text.strip():
        return fail("empty judge output")
    objs = json_objects(text)
    spans = [(s, e) for _, s, e in objs]
    values: list[float] = []
    problems: list[str] = []
    data: dict | None = None
    rationale = ""
    for obj, _, _ in objs:
        raw_value = get_key(obj, *SCORE_KEYS)
        if raw_value is None and not any(k.lower() in SCORE_KEYS for k in obj):
            continue
        data = data or obj
        v, err = _json_score(raw_value, lo, hi)
        if v is None:
            problems.append(err or "unreadable score field")
        else:
            values.append(v)
        r = get_key(obj, *RATIONALE_KEYS)
        if isinstance(r, str) and not rationale:
            rationale = r.strip()
    prose = _outside(text, spans)
    text_values, text_problems = _text_scores(prose, lo, hi)
    values += text_values
    problems += text_problems
    if not values and not problems:
        lone = re.fullmatch(rf"\s*[*#>\s]*{_NUM}\s*\.?\s*", _strip_scale_mentions(prose, lo, hi))
        if lone:
            values.append(float(lone.group(1)))
    if not rationale:
        rationale = _prose_rationale(prose)
    if problems:
        return fail(problems[0], rationale, data)
    distinct = sorted(set(values))
    if not distinct:
        if _REFUSAL.search(text):
            return fail(f"judge refused or could not score: {_snippet(text)}", rationale, data)
        return fail("no score found in the judge output", rationale, data)
    if len(distinct) > 1:
        return fail(f"two different scores in one reply ({', '.join(_fmt(v) for v in distinct)})", rationale, data)
    value = distinct[0]
    if value < lo or value > hi:
        return fail(f"score {_fmt(value)} is outside the {_fmt(lo)}–{_fmt(hi)} scale", rationale, data)
    if integer and not float(value).is_integer():
        return fail(f"score {_fmt(value)} is not a whole number on the {_fmt(lo)}–{_fmt(hi)} scale", rationale, data)
    return Parsed(value, rationale, True, None, data)


def _prose_rationale(prose: str) -> str:
    cleaned = re.sub(r"```.*?```", " ", prose, flags=re.S)
    return re.sub(r"\s+", " ", cleaned).strip()[:2000]


def _snippet(text: str, n: int = 80) -> str:
    s = re.sub(r"\s+", " ", text).strip()
    return s if len(s) <= n else s[: n - 1] + "…"


# -- labels --------------------------------------------------------------------------------------


def parse_label(text: str, labels: Mapping[str, tuple[str, ...]], *, key: str | tuple[str, ...] = "label") -> Parsed:
    """One label out of ``labels`` (canonical -> accepted spellings, lower case).

    Looks for a JSON field named ``key`` first; otherwise for exactly one accepted spelling
    labelled in prose ("Label: yes", "Answer: B") or standing alone. Several different labels, or
    none, is a failure with the reason.
    """
    if text is None or not text.strip():
        return fail("empty judge output")
    keys = (key,) if isinstance(key, str) else key
    objs = json_objects(text)
    spans = [(s, e) for _, s, e in objs]
    for obj, _, _ in objs:
        value = get_key(obj, *keys)
        if value is None:
            continue
        r = get_key(obj, *RATIONALE_KEYS)
        rationale = r.strip() if isinstance(r, str) else ""
        canon = canonical_label(value, labels)
        if canon is None:
            return fail(f"{keys[0]} field {value!r} is not one of {', '.join(labels)}", rationale, obj)
        return Parsed(canon, rationale, True, None, obj)
    prose = _outside(text, spans)
    found = _labels_in_prose(prose, labels, keys)
    rationale = _prose_rationale(prose)
    if len(found) == 1:
        return Parsed(found.pop(), rationale, True)
    if len(found) > 1:
        return fail(f"several different labels in one reply ({', '.join(sorted(found))})", rationale)
    if _REFUSAL.search(text):
        return fail(f"judge refused or could not decide: {_snippet(text)}", rationale)
    return fail(f"no {keys[0]} found in the judge output", rationale)


def canonical_label(value: object, labels: Mapping[str, tuple[str, ...]]) -> str | None:
    if isinstance(value, bool):
        value = "yes" if value else "no"
    v = re.sub(r"[\s*_`\"'.]+", " ", str(value)).strip().lower()
    for canon, spellings in labels.items():
        if v == canon.lower() or v in spellings:
            return canon
    return None


def _labels_in_prose(prose: str, labels: Mapping[str, tuple[str, ...]], keys: tuple[str, ...]) -> set[str]:
    t = prose.replace("**", "").replace("__", "")
    key_pat = "|".join(re.escape(k).replace("_", "[ _]") for k in keys)
    found: set[str] = set()
    for canon, spellings in labels.items():
        for s in {canon.lower(), *spellings}:
            word = re.escape(s)
            if re.search(rf"\b(?:{key_pat})\b\s*[:=\-]\s*[\"'(\[]?{word}\b", t, re.I):
                found.add(canon)
    if found:
        return found
    lone = re.fullmatch(r"\s*[\"'(\[]?([A-Za-z][A-Za-z ]{0,30}?)[\"')\].!]?\s*", t)
    if lone:
        c = canonical_label(lone.group(1), labels)
        if c:
            found.add(c)
    return found
