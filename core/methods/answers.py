"""Answer-format instructions for MCQ / true-false questions, and robust parsers for the replies.

The parsers return ``None`` rather than guess: a reply naming two options, or saying both yes and
no, is a parse failure for the scorer to record, never a silent wrong answer. A benchmark that
reads replies its own way (guesses included) keeps that reading in its own folder
(``core/benchmarks/<name>/answers.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.methods.prompts import text as template_text
from core.model import MCQ_LETTERS, Query


def answer_format(query: Query) -> str:
    return query.kind if query.kind in ("mcq", "tf") else "open"


def answer_instruction(query: Query) -> str:
    if query.kind == "mcq":
        letters = list(MCQ_LETTERS[: len(query.options)])
        listed = ", ".join(letters[:-1]) + f" or {letters[-1]}"
        return template_text("answers", "mcq", letters=listed)
    if query.kind == "tf":
        return template_text("answers", "tf")
    return ""


# -- multiple choice ----------------------------------------------------------------------------

_DECORATION = re.compile(r"[*_`#>]+")


def _letters_pattern(n_options: int) -> str:
    return "[" + MCQ_LETTERS[:n_options] + MCQ_LETTERS[:n_options].lower() + "]"


def parse_choice(text: str, n_options: int = 4) -> str | None:
    """The single option letter a reply commits to, or ``None`` (no letter, or several).

    Tier 1 – explicit commitments: "the answer is B", "Answer: (b)", "I'd choose C", "final answer: D".
    Tier 2 – other letter marks: "**B**", "Option B.", "(b)", "B)", a reply that starts with "B" / "B.".
    A tier decides when it names exactly one letter; alternatives ("A or B", "B and C") make it
    ambiguous. Lower-case letters count only where they cannot be the article "a" (in brackets, or
    followed by punctuation / end of text).
    """
    if not text or n_options < 1:
        return None
    n_options = min(n_options, len(MCQ_LETTERS))
    allowed = MCQ_LETTERS[:n_options]
    t = _DECORATION.sub(" ", text).strip()
    L = _letters_pattern(n_options)
    # a letter token: bracketed any case, or upper case, or lower case followed by punctuation/end
    tok = rf"(?:[\(\[]\s*({L})\s*[\)\]]|([{allowed}])(?![A-Za-z0-9'’])|({L})(?=\s*(?:[.,;:!?)]|$)))"

    def letters_in(matches: Iterable[tuple[str, ...]]) -> list[str]:
        return [next(g for g in m if g).upper() for m in matches]

    alt = rf"{tok}\s*(?:,|or|and|/|&)\s*(?:option\s*)?{tok}"

    commit = re.compile(
        rf"(?i:\b(?:final\s+answer|answer|correct\s+(?:option|choice|answer)|best\s+(?:option|choice)|"
        rf"choose|chose|pick|select|go\s+with|opt\s+for|recommend)\b)"
        rf"(?i:\s+(?:is|would|will|be|option|choice|probably|definitely|clearly)\b|\s*[:=\-])*\s*"
        rf"(?i:option\s*)?{tok}"
    )
    tier1 = letters_in(m.groups() for m in commit.finditer(t))
    if tier1:
        alternatives = re.search(rf"(?i:\b(?:answer|choose|chose|pick|select|go\s+with)\b).{{0,30}}?{alt}", t)
        if len(set(tier1)) == 1 and not alternatives:
            return tier1[0]
        return None

    marks: list[str] = []
    marks += letters_in(re.findall(rf"(?i:\boption|\bchoice)\s*{tok}", t))
    marks += [m.upper() for m in re.findall(rf"[\(\[]\s*({L})\s*[\)\]]", t)]
    marks += re.findall(rf"(?<![A-Za-z0-9'’])([{allowed}])\)", t)
    lead = re.match(rf"^\s*([{allowed}])(?:\s*$|\s*[.):,\-–—]|\s*\n)", t)
    if lead:
        marks.append(lead.group(1))
    elif lower_lead := re.match(rf"^\s*([{allowed.lower()}])(?:\s*$|[.):])", t):
        marks.append(lower_lead.group(1).upper())
    for m in re.finditer(rf"(?<![A-Za-z0-9'’])([{allowed}])\s*(?:,|or|and|/|&)\s*([{allowed}])(?![A-Za-z0-9'’])", t):
        marks += [m.group(1), m.group(2)]
    # markdown bold letters were stripped to spaces: "**B**" -> "  B  "; catch a lone letter line
    for m in re.finditer(rf"(?m)^\s*([{allowed}])\s*$", t):
        marks.append(m.group(1))
    distinct = set(marks)
    if len(distinct) == 1:
        return marks[0]
    return None


# -- yes / no -----------------------------------------------------------------------------------

_YES_START = re.compile(
    r"^(?:yes|yeah|yep|yup|absolutely(?! not)|definitely(?! not)|certainly(?! not)|of course(?! not)|sure(?:ly)?\b|correct\b|true\b)"
)
_NO_START = re.compile(
    r"^(?:no\b|nope|nah\b|not really|not quite|absolutely not|definitely not|certainly not|of course not|incorrect\b|false\b)"
)
_YES_PHRASE = re.compile(
    r"\b(?:i(?:'d| would| will|'ll)? say|my answer is|the answer is|answer:|answer is|i think|i believe|so,?)\s*[\"'“]?yes\b"
)
_NO_PHRASE = re.compile(
    r"\b(?:i(?:'d| would| will|'ll)? say|my answer is|the answer is|answer:|answer is|i think|i believe|so,?)\s*[\"'“]?no\b"
)


def parse_yes_no(text: str) -> str | None:
    """ "yes" / "no" from a reply that commits to one, else ``None``.

    Decides on the opening word ("Yes, …", "No.", "Absolutely not", "Nope") or on an explicit
    phrase anywhere ("I'd say no", "my answer is yes"). "Yes and no", or phrases for both, is None.
    """
    if not text:
        return None
    t = _DECORATION.sub(" ", text).strip().lower()
    t = t.replace("’", "'")
    t = re.sub(r"^[\s\"'“(\[:\-–—]+", "", t)
    t = re.sub(r"^(?:answer|my answer|final answer)\s*[:\-–—]\s*", "", t)
    if re.match(r"^(?:yes\s*(?:and|or|/)\s*no|no\s*(?:and|or|/)\s*yes)\b", t):
        return None
    found: set[str] = set()
    if _NO_START.match(t):
        found.add("no")
    elif _YES_START.match(t):
        found.add("yes")
    if _YES_PHRASE.search(t):
        found.add("yes")
    if _NO_PHRASE.search(t):
        found.add("no")
    if len(found) == 1:
        return found.pop()
    return None
