"""PrefEval's error-type judge, as the official code runs it (PrefEval @50795054,
``generation_task/llm_based_evaluation_errortypes.py`` and
``get_preference_following_accuracy_generation_task.py``; prompts verbatim in
``prompts.toml`` next to it).

Four checks, one judge call each, run one after the other in the official order, because the
hallucination check reads the preference the acknowledgement check extracted:

    acknowledge -> violation -> hallucination -> helpful

Each reply is read as PrefEval reads it (BeautifulSoup: the stripped text of the first
``<answer>``, "" when there is none), and the label follows ``analyze_errors`` exactly, with
substring tests on the lower-cased answers (so "None" counts as a "no", and an empty helpful
answer counts as helpful):

    A = "yes" in acknowledge;  H = A and "yes" in hallucination;  V = "yes" in violation;
    U = "no" in helpful
    U                 -> unhelpful
    A, not H, V       -> inconsistent
    A, H, V           -> hallucination of preference violation
    not A, V          -> preference-unaware violation
    otherwise         -> accurate  (so accurate <=> not V and not U)

A reply without ``<answer>`` is not a failure (PrefEval reads it as "no yes"); its check lists it
in the label's ``extra["empty_answers"]``. A failed judge CALL makes the label a recorded failure.
"""

from __future__ import annotations

from functools import partial

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input, to_judgment
from core.judges.parsing import Parsed
from core.judges.templates import template
from core.plan import Message
from core.providers.calls import Complete
from core.text.tags import first_tag_text

#: Official order (the hallucination check needs the acknowledgement's <preference>).
CHECKS = ("acknowledge", "violation", "hallucination", "helpful")
DIMENSION = {
    "acknowledge": "acknowledged",
    "violation": "violated",
    "hallucination": "hallucinated",
    "helpful": "helpful",
}
LABELS = (
    "unhelpful",
    "inconsistent",
    "hallucination of preference violation",
    "preference-unaware violation",
    "accurate",
)
#: PrefEval's judge call: temperature 0, max_tokens 100.
MAX_TOKENS = 100


def classify(ack: str, hallucination: str, violation: str, helpful: str) -> tuple[str, bool, dict[str, bool]]:
    """``(label, accurate, flags)`` from the four raw ``<answer>`` texts, as ``analyze_errors``."""
    a = "yes" in ack.lower()
    h = a and "yes" in hallucination.lower()
    v = "yes" in violation.lower()
    u = "no" in helpful.lower()
    if u:
        label = "unhelpful"
    elif a and not h and v:
        label = "inconsistent"
    elif a and h and v:
        label = "hallucination of preference violation"
    elif not a and v:
        label = "preference-unaware violation"
    else:
        label = "accurate"
    return label, label == "accurate", {"acknowledged": a, "hallucinated": h, "violated": v, "unhelpful": u}


def check_prompt(check: str, *, preference: str, question: str, response: str, restatement: str = "") -> str:
    """One check's user message: ``str.replace`` of each placeholder in the official order, one
    after the other (not ``templates.fill``'s single pass), so a response that itself contains
    "{question}" becomes what it becomes in PrefEval."""
    text = template("prefeval", check).fields["text"]
    if check == "acknowledge":
        pairs = [("end_generation", response), ("question", question)]
    elif check == "hallucination":
        pairs = [("preference", preference), ("assistant_restatement", restatement)]
    else:  # violation and helpful (helpful has no {preference}: a no-op, as in the official code)
        pairs = [("preference", preference), ("question", question), ("end_generation", response)]
    for name, value in pairs:
        text = text.replace("{" + name + "}", value)
    return text


def judged_preference(item: JudgeInput) -> str | None:
    """The preference as worded in the judged form's own file (a few records reword it across
    files), else the preference text."""
    pid = item.query.preference_id
    for s in item.bundle.sessions:
        if s.expression_type == item.expression_type and pid in s.preference_ids and "prefeval_preference" in s.meta:
            return str(s.meta["prefeval_preference"])
    return item_preference(item)


class TaxonomyJudge:
    kind = "taxonomy"
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature, max_tokens=MAX_TOKENS)
        self.name = f"taxonomy:{model_id}"

    @property
    def version(self) -> str:
        return template("prefeval", "system").version

    def system(self) -> str:
        return template("prefeval", "system").fields["text"]

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        preference = judged_preference(item)
        if not preference:
            return [
                missing_input(
                    kind=self.kind,
                    dimension="label",
                    judge_model=self.spec.id,
                    version=self.version,
                    reason="the query has no target preference",
                    scale=(0.0, 1.0),
                )
            ]
        fields = {"preference": preference, "question": item.query.text, "response": item.response_text}
        checks: list[Judgment] = []
        restatement = ""
        for check in CHECKS:  # sequential: hallucination reads the acknowledgement's <preference>
            judgment = await self._check(check, complete, restatement=restatement, **fields)
            if check == "acknowledge":
                restatement = judgment.extra.get("extract_pref", "")
            checks.append(judgment)
        return [*checks, self.label(checks)]

    async def _check(self, check: str, complete: Complete, **fields: str) -> Judgment:
        prompt: list[Message] = messages(self.system(), check_prompt(check, **fields))
        completion = await complete(self.spec, prompt)
        text = completion.text if completion.ok else ""
        answer = first_tag_text(text, "answer")
        other = "preference" if check == "acknowledge" else "explanation"
        extra = {
            "answer": answer,
            ("extract_pref" if check == "acknowledge" else "explanation"): first_tag_text(text, other),
        }
        # the check's own reading: helpful scores 0 when "no" is in its answer, the others 1 on "yes"
        hit = "no" in answer.lower() if check == "helpful" else "yes" in answer.lower()
        score = (0.0 if hit else 1.0) if check == "helpful" else (1.0 if hit else 0.0)
        return to_judgment(
            kind=self.kind,
            dimension=DIMENSION[check],
            spec=self.spec,
            version=self.version,
            completion=completion,
            parsed=Parsed(score, extra.get("explanation", ""), True),
            scale=(0.0, 1.0),
            score=score,
            extra=extra,
        )

    def label(self, checks: list[Judgment]) -> Judgment:
        judgment = partial(
            Judgment,
            kind=self.kind,
            dimension="label",
            judge_model=self.spec.id,
            prompt_version=self.version,
            temperature=self.spec.params.temperature,
            scale_min=0.0,
            scale_max=1.0,
            raw="",
        )
        failed = [c.dimension for c in checks if not c.parse_ok]
        if failed:
            return judgment(score=None, rationale="", parse_ok=False, error=f"judge call(s) {failed} failed; no label")
        answers = {c.dimension: str(c.extra.get("answer", "")) for c in checks}
        name, accurate, flags = classify(
            answers["acknowledged"], answers["hallucinated"], answers["violated"], answers["helpful"]
        )
        empty = [dim for dim, ans in answers.items() if not ans]
        why = ", ".join(f"{k}={'yes' if b else 'no'}" for k, b in flags.items())
        return judgment(
            score=1.0 if accurate else 0.0,
            rationale=f"{name} ({why})",
            parse_ok=True,
            extra={"label": name, **flags, "answers": answers, "empty_answers": empty},
        )
