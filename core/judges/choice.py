"""MCQ and true/false scoring: no model call, the answer parsers of ``core.methods.answers``
against the query's gold answer (RealPref §4.2: accuracy; random baselines 0.25 and 0.5).

A reply that names no option, or several, is a parse failure (``parse_ok=False``, no score, raw
text kept): it is neither right nor wrong, and accuracy helpers leave it out (and count it).

A plan whose ``answer_format`` a benchmark declares (:attr:`core.benchmark.Benchmark.answer_formats`:
PrefEval's ``mcq-prefeval``, PersonaMem's ``mcq-personamem``) is scored by that benchmark's own
scorer, which reads replies as the benchmark does; its judgments carry their own version.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from core.benchmark import installed
from core.judges.base import JudgeInput, Judgment
from core.methods.answers import parse_choice, parse_yes_no
from core.plan import PromptPlan
from core.providers import PROVIDERS
from core.providers.calls import Complete

#: Its "parser:"/"metric:" prefix makes the judge source "parser" (core.judges.aggregate.source_of).
JUDGE_MODEL = "parser:choice"
VERSION = "choice-parser-v1"
SCALE = (0.0, 1.0)


def score_choice(query_kind: str, options: int, gold: str | None, text: str) -> Judgment:
    """One accuracy judgment for a reply to an MCQ (``options`` letters) or a yes/no question."""
    dimension = "accuracy"
    judgment = partial(
        Judgment,
        kind="choice",
        dimension=dimension,
        raw=text,
        judge_model=JUDGE_MODEL,
        prompt_version=VERSION,
        scale_min=SCALE[0],
        scale_max=SCALE[1],
    )
    if gold is None:
        return judgment(score=None, rationale="", parse_ok=False, error="the query has no gold answer")
    if query_kind == "mcq":
        picked = parse_choice(text, options)
        what = f"one of {options} option letters"
    elif query_kind == "tf":
        picked = parse_yes_no(text)
        what = "a yes or no"
    else:
        return judgment(
            score=None,
            rationale="",
            parse_ok=False,
            error=f"choice scoring applies to mcq/tf queries, not {query_kind!r}",
        )
    if picked is None:
        return judgment(
            score=None, rationale="", parse_ok=False, error=f"the reply does not commit to {what}", extra={"gold": gold}
        )
    correct = picked == gold
    rationale = f"answered {picked!r}, gold {gold!r}: {'correct' if correct else 'wrong'}"
    return judgment(
        score=1.0 if correct else 0.0, rationale=rationale, parse_ok=True, extra={"parsed": picked, "gold": gold}
    )


def prefill_sent(plan: PromptPlan, model_id: str) -> bool:
    """Whether the final step's prefill reached the model: the engine appends it only for
    providers that continue a trailing assistant message (``supports_prefill``). A replayed
    response is read as its recorded model's (``replay:<model id>``)."""
    if plan.steps[-1].prefill is None:
        return False
    provider, _, rest = model_id.partition(":")
    if provider == "replay" and ":" in rest:
        provider = rest.partition(":")[0]
    entry = PROVIDERS.get(provider)
    return entry is not None and bool(getattr(entry.load(), "supports_prefill", False))


def accuracy_judgment(text: str, version: str) -> partial[Judgment]:
    """A choice accuracy judgment of ``text`` under a benchmark's own reading ``version``."""
    return partial(
        Judgment,
        kind="choice",
        dimension="accuracy",
        raw=text,
        judge_model=JUDGE_MODEL,
        prompt_version=version,
        scale_min=SCALE[0],
        scale_max=SCALE[1],
    )


def benchmark_scorer(answer_format: str) -> Callable[[JudgeInput], list[Judgment]] | None:
    """The scorer a benchmark declares for plans of this answer format (None: the generic reading)."""
    for benchmark in installed():
        for entry in benchmark.answer_formats:
            if entry.name == answer_format:
                scorer: Callable[[JudgeInput], list[Judgment]] = entry.load()
                return scorer
    return None


class ChoiceJudge:
    kind = "choice"
    name = "choice"
    applies_to = ("mcq", "tf")

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        q = item.query
        scorer = benchmark_scorer(item.plan.answer_format)
        if scorer is not None:
            return scorer(item)
        return [score_choice(q.kind, len(q.options), q.answer, item.response_text)]
