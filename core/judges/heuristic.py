"""``demo:heuristic``: an offline judge that scores the RealPref dimensions from word overlap.

It reads only words – no model, no embeddings – so it is deterministic, instant and always
available, which is what the offline demo and the tests need. It is NOT an LLM judge and is
labelled so (``heuristic=True``, ``judge_model="demo:heuristic"``); aggregates never pool it with
LLM judges (:mod:`core.judges.aggregate`).

Evidence it uses (the rationale names it, e.g. "mentions 'live calls', 'written' from the
preference; no conflicting option"):

- the preference is split into favoured and disfavoured words (:func:`lexical.split_polarity`:
  "A over B", "never B", "Avoids B …, and would rather A", "I strictly avoid B", "a B allergy",
  "…, no B, …"); words of the question itself do not count;
- each word of the answer is read in its place (:func:`lexical.stances`): a disfavoured word is a
  conflict only where the answer puts it forward; mentioned to avoid it ("skip the Loom videos",
  "instead of recorded updates", "no …", "without …") or cited ("since you dislike bookings", a
  quotation, "your preference: …") it counts as awareness; a favoured word waved away ("no need
  to stick to a halal diet") is a conflict;
- phrases like "you mentioned", "since you prefer" count as stating the preference;
- answer quality looks at overlap with the question, length, structure, and apologies /
  "I don't remember" statements;
- a query without a target preference gets awareness and alignment "not applicable" (recorded,
  parsed, no score) and a quality score: a verdict, not a parse failure.

Scores (1–5) follow the shape of RealPref's Tables 4–6, crudely: a lexical smoke test, not a
measurement.
"""

from __future__ import annotations

import re
from typing import Any

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference
from core.providers.calls import Complete
from core.text import lexical
from core.text.words import content_stems, stem, tokens, words

JUDGE_MODEL = "demo:heuristic"
# v3: words read in place (avoided / cited / recommended); n/a without a preference.
# v4: "A far more than B" puts B on the disfavoured side of a preference.
# v5: awareness stays at 3 or below when the answer never refers to the user (RealPref's 4 needs it).
# v6: first-person preferences ("I strictly avoid …", "a peanut allergy") and "no …" list items rule
#     out what they name; waving a favoured word away ("no need to stick to …") is a conflict;
#     coverage is out of both sides of the preference, as its count takes both.
VERSION = "heuristic-lexical-v6"
SCALE = (1.0, 5.0)
NOT_APPLICABLE = "not applicable: no target preference (the query names no preference to follow)"

_APOLOGY = re.compile(
    r"\b(?:i (?:don't|do not|cannot|can't) (?:have access|remember|recall|know your)|as an ai|i'm sorry|i am sorry|"
    r"i (?:don't|do not) have (?:any )?(?:memory|information about your))\b",
    re.I,
)


def _quote(items: list[str], limit: int = 4) -> str:
    shown = [f"'{i}'" for i in items[:limit]]
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(shown) + more


def _evidence(stems: set[str], response: str, preference: str) -> list[str]:
    """Surface forms of matched stems, as preference phrases where both words matched."""
    matched_phrases = [
        surface
        for (a, b), surface in sorted(lexical.phrases(preference).items())
        if a in stems and b in stems and (a, b) in lexical.phrases(response)
    ]
    covered = {stem(w) for p in matched_phrases for w in p.split()}
    singles = sorted({t.surface for t in tokens(preference) if t.stem in stems and t.stem not in covered})
    return matched_phrases + singles


def score_heuristic(preference: str, query: str, response: str) -> dict[str, tuple[float, str]]:
    """dimension -> (score 1–5, rationale). Pure function of the three texts."""
    q_stems = content_stems(query)
    favoured, disfavoured = lexical.split_polarity(preference)
    favoured -= q_stems
    disfavoured -= q_stems
    r_stems = content_stems(response)
    read = lexical.stances(response)

    # Waving a wanted thing away ("no need to stick to a halal diet") goes against it too.
    fav_hits = (favoured & r_stems) - read.dismissed
    conflicts = (disfavoured & read.recommended) | (favoured & read.dismissed)
    avoided = disfavoured & (read.avoided | read.cited)
    cue = lexical.USER_CUES.search(response)
    target = max(2.0, 0.3 * len(favoured | disfavoured)) if favoured else 2.0
    coverage = min(1.0, (len(fav_hits) + len(avoided)) / target)

    fav_ev = _evidence(fav_hits, response, preference)
    bad_ev = _evidence(conflicts, response, preference)
    avoid_ev = _evidence(avoided, response, preference)

    # -- awareness ----------------------------------------------------------------------------
    aware = 1 + (1 if cue else 0) + round(3 * coverage)
    if not fav_hits and not avoided:
        aware = 2 if cue else 1
    elif not cue:
        # RealPref's 4 "mentions user preference … and integrates" it: an answer that never refers
        # to the user may share the preference's words by chance (a generic plan naming the
        # sleeper bus), which is at most 3, "highly generic, can be applied to any user".
        aware = min(aware, 3)
    aware = max(1, min(5, aware))
    parts = []
    parts.append(f"mentions {_quote(fav_ev)} from the preference" if fav_ev else "no favoured word of the preference")
    if avoid_ev:
        parts.append(f"steers away from {_quote(avoid_ev)}")
    parts.append(
        f"addresses the user's preference explicitly ('{cue.group(0)}')"
        if cue
        else "never refers to the user's preference"
    )
    aware_why = "; ".join(parts)

    # -- alignment ----------------------------------------------------------------------------
    if conflicts:
        align = 2 if (fav_hits or avoided) else 1
        align_why = f"suggests {_quote(bad_ev)}, which the preference rules out"
        if fav_hits:
            align_why += f", alongside {_quote(fav_ev)}"
    elif not favoured:
        align = 4 if disfavoured else 3
        align_why = "no conflicting option" + (f"; steers away from {_quote(avoid_ev)}" if avoid_ev else "")
        if avoid_ev and cue:
            align = 5
    elif not fav_hits and not avoided:
        align, align_why = 3, "no conflicting option, but nothing from the preference either (generic answer)"
    elif len(fav_hits) + len(avoided) < 2:
        align = 3
        align_why = f"no conflicting option; only incidental overlap with the preference ({_quote(fav_ev or avoid_ev)})"
    else:
        align = 5 if coverage >= 0.67 else 4
        align_why = f"mentions {_quote(fav_ev or avoid_ev)} from the preference; no conflicting option"

    return {
        "awareness": (float(aware), aware_why),
        "alignment": (float(align), align_why),
        "quality": score_quality(query, response),
    }


def score_quality(query: str, response: str) -> tuple[float, str]:
    """Answer quality (1–5, rationale) from length, structure and overlap with the question."""
    q_stems = content_stems(query)
    r_stems = content_stems(response)
    n_words = len(words(response))
    q_overlap = len(q_stems & r_stems) / len(q_stems) if q_stems else 1.0
    items = len(re.findall(r"(?m)^\s*(?:[-*•]|\d+[.)])\s+", response))
    paragraphs = len([p for p in re.split(r"\n\s*\n", response) if p.strip()])
    if n_words < 30:
        quality = 2
    elif n_words < 80:
        quality = 3
    else:
        quality = 4
    if quality == 4 and n_words >= 150 and (items >= 3 or paragraphs >= 3) and q_overlap >= 0.3:
        quality = 5
    notes = [f"{n_words} words", f"{q_overlap:.0%} of the question's content words", f"{items} list items"]
    if q_overlap == 0:
        quality = 1 if n_words < 30 else 2
        notes.append("does not touch the question")
    if _APOLOGY.search(response):
        quality = min(quality, 3 if n_words >= 80 else 2)
        notes.append("apologises or says it cannot remember")
    return float(quality), ", ".join(notes)


class HeuristicJudge:
    kind = "rubric"
    name = JUDGE_MODEL
    applies_to = ("open",)

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        return self.judge_text(item_preference(item), item.query.text, item.response_text)

    def judge_text(self, preference: str | None, query: str, response: str) -> list[Judgment]:
        base: dict[str, Any] = dict(
            kind=self.kind,
            judge_model=JUDGE_MODEL,
            prompt_version=VERSION,
            temperature=None,
            scale_min=SCALE[0],
            scale_max=SCALE[1],
            heuristic=True,
        )
        if not preference:  # a verdict, not a failure: there is nothing to be aware of or align with
            quality, why = score_quality(query, response)
            return [
                Judgment(
                    dimension=d,
                    score=None,
                    rationale=NOT_APPLICABLE,
                    raw=NOT_APPLICABLE,
                    parse_ok=True,
                    extra={"not_applicable": True},
                    **base,
                )
                for d in ("awareness", "alignment")
            ] + [Judgment(dimension="quality", score=quality, rationale=why, raw=why, parse_ok=True, **base)]
        scores = score_heuristic(preference, query, response)
        return [
            Judgment(dimension=d, score=s, rationale=why, raw=why, parse_ok=True, **base)
            for d, (s, why) in scores.items()
        ]
