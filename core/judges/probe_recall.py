"""``probe-recall``: how much of the gold preference a knowledge probe's answer states (no model call).

A generated probe ("what do I prefer when it comes to <topic>?", :func:`core.model.knowledge_probe`)
is answered in prose, so it cannot be scored by a parser. This judge reads words only, like
``demo:heuristic``, and is labelled heuristic for the same reason:

- where the query has a checklist (CUPID), an item counts as stated when the answer holds at least
  half of the item's content words; the score is the share of items stated (a lexical stand-in
  for CUPID's recall side of preference matching);
- otherwise the score is the share of the preference's content words the answer holds.

Words of the probe's own question never count (it names the topic). The score is 0–1;
:data:`KNOWN_AT` is the mark from which the diagnosis reads the preference as known.
"""

from __future__ import annotations

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference
from core.providers.calls import Complete
from core.text.words import content_stems

NAME = "probe-recall"
JUDGE_MODEL = "heuristic:probe-recall"
VERSION = "probe-recall-v1"
KIND = "probe"
DIMENSION = "recall"
#: A probe answer stating at least half of the preference (or of its checklist items) knows it.
KNOWN_AT = 0.5


def recall(gold: str, checklist: list[str], answer: str, question: str = "") -> tuple[float | None, str]:
    """(share of the gold stated, why). None when the gold has no content word left to look for."""
    said = content_stems(answer)
    asked = content_stems(question)
    if checklist:
        # an item made only of the question's words says nothing the probe did not: left out
        items = [w for w in (content_stems(item) - asked for item in checklist) if w]
        if not items:
            return None, "no checklist item has a content word beyond the question's"
        stated = sum(1 for wanted in items if len(wanted & said) / len(wanted) >= 0.5)
        return stated / len(items), f"states {stated} of {len(items)} checklist items"
    wanted = content_stems(gold) - asked
    if not wanted:
        return None, "the preference has no content word beyond the question's"
    hit = sorted(wanted & said)
    missing = sorted(wanted - said)
    why = f"states {len(hit)} of {len(wanted)} content words of the preference"
    if hit:
        why += ": " + ", ".join(hit[:6]) + ("…" if len(hit) > 6 else "")
    if missing:
        why += "; missing " + ", ".join(missing[:6]) + ("…" if len(missing) > 6 else "")
    return len(hit) / len(wanted), why


class ProbeRecallJudge:
    kind = KIND
    name = NAME
    applies_to = ("open",)

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        return [self.judge_text(item_preference(item) or "", item.query.checklist, item.response_text, item.query.text)]

    def judge_text(self, gold: str, checklist: list[str], answer: str, question: str = "") -> Judgment:
        score, why = recall(gold, checklist, answer, question)
        return Judgment(
            kind=KIND,
            dimension=DIMENSION,
            score=score,
            rationale=why,
            raw=why,
            parse_ok=True,
            judge_model=JUDGE_MODEL,
            prompt_version=VERSION,
            temperature=None,
            scale_min=0.0,
            scale_max=1.0,
            heuristic=True,
            extra={} if score is not None else {"not_applicable": True},
        )
