"""PersonaMem-v2's open-ended judges, in both published versions (PROTOCOL.md §4; prompts in our own
words in ``prompts.toml``: the repository has no licence).

* ``personamem-v2-boxed:<model>`` — the later score judge (``inference_utils.py`` file version
  52933841392, used by ``inference.py`` @ 6a36975f): the *negative* template when the preference
  starts with "do not" (case-insensitive), else the *positive* one; ``{user_query}`` is the query's
  content (no recall sentence). **One** call. Reading (:func:`extract_judge_decision`): the first
  ``\\boxed{number}`` clamped to [0, 1]; else ``score``/``rating`` followed by a number, or
  ``number / 1.0``, only if in [0, 1]; else 0.0 (as the official code; marked ``unparsed``).
  Dimension ``score``, scale 0-1; its mean is the official aggregate.
* ``personamem-v2-vote:<model>`` — the earlier yes/no judge (@ a786f0e8): the narrow template with
  the last five messages of the 32k history, the raw ``user_query`` cell, the preference, the
  correct answer and the reply; **three** calls, majority vote. Reading (:func:`parse_yes_no`):
  ``\\boxed{yes|no}`` (case-insensitive), else a reply starting with yes/no, else the first sentence
  holding exactly one of yes/no, else no. Dimension ``accuracy`` (0/1).

Both send one ``user`` message and nothing else: no temperature, no max_tokens, as the official
client. The judge model is the one named after the kind (the official judge is the model under
``--model_name``: GPT-5-chat by default). A failed call is a recorded failure (the official code
counts it as 0 / no): differs on purpose. The broad judge (persona-file preference lists) is not
built: the later version comments it out and the raw persona files are not imported.
"""

from __future__ import annotations

import re

from core.benchmarks.personamem_v2.answers import BENCHMARK
from core.judges.base import JudgeInput, Judgment
from core.judges.common import judge_spec, messages, missing_input
from core.judges.templates import template
from core.providers.calls import Complete

BOXED = "personamem-v2-boxed"
VOTE = "personamem-v2-vote"
VOTES = 3
#: The judge prompt family (prompts.toml, the descriptor's judge_prompts).
FAMILY = "personamem-v2"

_NUM = r"(-?\d+(?:\.\d+)?|-?\.\d+)"
#: The three \boxed{number} variants, case-sensitive (the notes do not spell them; ours: plain,
#: inside $…$, and with \text{…} around the number). The first match anywhere wins.
_BOXED_NUMBER = re.compile(r"\$?\\boxed\{\s*(?:\\text\{\s*)?" + _NUM + r"\s*\}?\s*\}\$?")
_FALLBACKS = (
    re.compile(r"score[:\s]+" + _NUM, re.IGNORECASE),
    re.compile(r"rating[:\s]+" + _NUM, re.IGNORECASE),
    re.compile(_NUM + r"\s*/\s*1\.0"),
)
_BOXED_YES_NO = re.compile(r"\\boxed\{\s*(yes|no)\s*\}", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_YES, _NO = re.compile(r"\byes\b", re.IGNORECASE), re.compile(r"\bno\b", re.IGNORECASE)


def extract_judge_decision(reply: str) -> tuple[float, str]:
    """(score, how): ``boxed`` (clamped), ``score``/``rating``/``fraction`` (kept only in [0, 1])
    or ``unparsed`` (0.0)."""
    m = _BOXED_NUMBER.search(reply)
    if m:
        return min(1.0, max(0.0, float(m.group(1)))), "boxed"
    for how, pattern in zip(("score", "rating", "fraction"), _FALLBACKS, strict=True):
        m = pattern.search(reply)
        if m and 0.0 <= float(m.group(1)) <= 1.0:
            return float(m.group(1)), how
    return 0.0, "unparsed"


def parse_yes_no(reply: str) -> tuple[bool, str]:
    """(yes, how) for one reply of the earlier judge."""
    m = _BOXED_YES_NO.search(reply)
    if m:
        return m.group(1).lower() == "yes", "boxed"
    low = reply.strip().lower()
    if low.startswith("yes"):
        return True, "starts"
    if low.startswith("no"):
        return False, "starts"
    for sentence in _SENTENCE.split(reply.strip()):
        yes, no = bool(_YES.search(sentence)), bool(_NO.search(sentence))
        if yes != no:
            return yes, "sentence"
    return False, "unparsed"


def majority(votes: list[bool]) -> bool:
    return sum(votes) * 2 > len(votes)


def boxed_template_key(preference: str) -> str:
    return "boxed_negative" if preference.lower().startswith("do not") else "boxed_positive"


def boxed_prompt(user_query: str, preference: str, model_response: str) -> str:
    t = template(FAMILY, boxed_template_key(preference))
    return t.text("text", user_query=user_query, preference=preference, model_response=model_response)


def vote_prompt(context: str, user_query: str, preference: str, correct_answer: str, model_response: str) -> str:
    return template(FAMILY, "vote_narrow").text(
        "text",
        related_conversation_snippet=context,
        user_query=user_query,
        preference=preference,
        correct_answer=correct_answer,
        model_response=model_response,
    )


def _base_extra(item: JudgeInput) -> dict:
    q = item.query
    return {"benchmark": BENCHMARK, "distance_bin": q.meta.get("distance_bin", "(none)"), "size": q.meta.get("size")}


def _preference(item: JudgeInput) -> str | None:
    pref = item.query.meta.get("preference")
    if isinstance(pref, str) and pref.strip():
        return pref
    return item.query.gold_preference


class _Base:
    kind = ""
    dimension = ""
    key = ""
    applies_to = ("open",)

    def __init__(self, model_id: str):
        # The official client sends model and messages only.
        self.spec = judge_spec(model_id, None)
        self.name = f"{self.kind}:{model_id}"

    @property
    def version(self) -> str:
        return template(FAMILY, self.key).version

    def _judgment(self, score: float | None, rationale: str, raw: str, extra: dict, error: str | None) -> Judgment:
        return Judgment(
            kind=self.kind,
            dimension=self.dimension,
            score=score,
            rationale=rationale,
            raw=raw,
            parse_ok=error is None,
            judge_model=self.spec.id,
            prompt_version=self.version,
            temperature=None,
            scale_min=0.0,
            scale_max=1.0,
            error=error,
            extra=extra,
        )

    def _missing(self, reason: str) -> Judgment:
        return missing_input(
            kind=self.kind,
            dimension=self.dimension,
            judge_model=self.spec.id,
            version=self.version,
            reason=reason,
            scale=(0.0, 1.0),
        )


class BoxedJudge(_Base):
    kind = BOXED
    dimension = "score"
    key = "boxed_positive"

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        pref = _preference(item)
        if pref is None:
            return [self._missing("no preference: not a PersonaMem-v2 query")]
        if not item.response_text.strip() or item.response_text.lstrip().startswith("ERROR:"):
            return [self._missing("empty or ERROR reply: the official judge pass skips it")]
        key = boxed_template_key(pref)
        prompt = boxed_prompt(item.query.text, pref, item.response_text)
        completion = await complete(self.spec, messages(None, prompt))
        extra = _base_extra(item) | {"template": key}
        if not completion.ok:
            return [self._judgment(None, "", completion.text, extra, f"judge call failed: {completion.error}")]
        score, how = extract_judge_decision(completion.text)
        extra |= {"parsed_by": how, "unparsed": how == "unparsed"}
        note = " (no score found: 0.0 as the official extract_judge_decision)" if how == "unparsed" else ""
        rationale = f"Judge 1 (score: {score:.2f}){note}"
        return [self._judgment(score, rationale, completion.text, extra, None)]


class VoteJudge(_Base):
    kind = VOTE
    dimension = "accuracy"
    key = "vote_narrow"

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        q = item.query
        pref = _preference(item)
        if pref is None:
            return [self._missing("no preference: not a PersonaMem-v2 query")]
        if not item.response_text.strip() or item.response_text.lstrip().startswith("ERROR:"):
            return [self._missing("empty or ERROR reply: the official judge pass skips it")]
        context = q.meta.get("vote_context_32k")
        cell = q.meta.get("user_query")
        correct = q.meta.get("correct_answer", q.answer or "")
        prompt = vote_prompt(
            context if isinstance(context, str) else "",
            cell if isinstance(cell, str) else q.text,
            pref,
            str(correct),
            item.response_text,
        )
        extra = _base_extra(item)
        votes: list[bool] = []
        hows: list[str] = []
        raws: list[str] = []
        for _ in range(VOTES):
            completion = await complete(self.spec, messages(None, prompt))
            raws.append(completion.text)
            if not completion.ok:
                raw = "\n\n---\n\n".join(raws)
                return [self._judgment(None, "", raw, extra, f"judge call failed: {completion.error}")]
            yes, how = parse_yes_no(completion.text)
            votes.append(yes)
            hows.append(how)
        verdict = majority(votes)
        extra |= {"votes": votes, "parsed_by": hows}
        rationale = f"{sum(votes)} of {VOTES} judges say yes: {'yes' if verdict else 'no'} (majority vote)"
        return [self._judgment(1.0 if verdict else 0.0, rationale, "\n\n---\n\n".join(raws), extra, None)]
