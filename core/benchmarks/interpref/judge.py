"""InterPref pairwise evaluation (InterPref paper §4.1, App. C–D).

**Pass** – two users hold opposed preferences p and p^d; a model answered the same question for
each (r for p, r^d for p^d). The judge is shown both preferences and both responses and must say
which response was written for which preference, in all 4 orders (preferences swapped ×
responses swapped). The instance passes only if every order is right (chance 0.5**4 = 6.25%).
A reply that cannot be parsed leaves its order undecided, and the instance's pass is then a
recorded failure (no score), not a fail.

**Win rate** – two models' response pairs are compared for the same preference pair; the
judge picks the pair that better reflects the preferences (or a tie), in both presentation
orders. :func:`win_rates` turns stored outcomes into the win-rate matrix and Bradley–Terry
coefficients with :mod:`core.benchmarks.interpref.metrics`. LLM judgments only: heuristic and human ones are filtered out.

The evaluator prompts are prefscope's own wording (``prompts.toml``, judge prompt family ``interpref``): the paper does not
print them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations

import numpy as np

from core.benchmarks.interpref.metrics import bradley_terry, order_disagreement, pass_rate, win_rate_matrix
from core.judges.aggregate import only
from core.judges.base import JudgeInput, Judgment
from core.judges.common import judge_spec, messages, to_judgment
from core.judges.parsing import parse_label
from core.judges.templates import Template, template
from core.plan import Message
from core.providers.calls import Complete

AB = {"A": ("a", "answer a", "response a"), "B": ("b", "answer b", "response b")}
XY = {"X": ("x", "assistant x"), "Y": ("y", "assistant y"), "tie": ("draw", "tied", "equal", "neither")}
#: (preference shown as "Preference 1" is p?, response shown as "A" is r?)
ORDERS = ((True, True), (True, False), (False, True), (False, False))


@dataclass(frozen=True)
class PairInput:
    query: str
    preference: str  # p
    opposed: str  # p^d
    response: str  # r, written for p
    opposed_response: str  # r^d, written for p^d


class PairwiseJudge:
    kind = "pairwise"
    applies_to: tuple[str, ...] = ()  # needs two responses: not a per-response judge (see module doc)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature)
        self.name = f"pairwise:{model_id}"

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        return []  # never called per response: use judge_pair / compare

    # -- pass ------------------------------------------------------------------------------
    def order_prompt(self, pair: PairInput, pref_first: bool, resp_first: bool) -> tuple[Template, list[Message]]:
        t = template("interpref", "match")
        p1, p2 = (pair.preference, pair.opposed) if pref_first else (pair.opposed, pair.preference)
        a, b = (pair.response, pair.opposed_response) if resp_first else (pair.opposed_response, pair.response)
        return t, messages(
            t.fields["system"],
            t.text("user", query=pair.query, preference_1=p1, preference_2=p2, response_a=a, response_b=b),
        )

    async def judge_pair(self, pair: PairInput, complete: Complete) -> list[Judgment]:
        """Four order judgments (``order-1`` … ``order-4``: 1 correct, 0 wrong) and one ``pass``."""
        results = await asyncio.gather(
            *(self._order(pair, pf, rf, n, complete) for n, (pf, rf) in enumerate(ORDERS, 1))
        )
        orders = [j.score for j in results]
        version = template("interpref", "match").version
        decided = [bool(s) for s in orders if s is not None]
        extra: dict[str, object] = {"orders": orders}
        judgment = partial(
            Judgment,
            kind=self.kind,
            dimension="pass",
            judge_model=self.spec.id,
            prompt_version=version,
            temperature=self.spec.params.temperature,
            scale_min=0.0,
            scale_max=1.0,
            raw="\n\n---\n\n".join(j.raw for j in results),
        )
        if len(decided) < len(ORDERS):
            bad = [n for n, s in enumerate(orders, 1) if s is None]
            summary = judgment(
                score=None,
                rationale="",
                parse_ok=False,
                extra=extra,
                error=f"order(s) {bad} could not be parsed; pass is undecided",
            )
        else:
            passed = all(decided)
            extra["disagreement"] = len(set(decided)) > 1
            why = f"{sum(decided)} of 4 orders matched correctly" + ("" if passed else "; pass needs all 4")
            summary = judgment(score=1.0 if passed else 0.0, rationale=why, parse_ok=True, extra=extra)
        return [*results, summary]

    async def _order(self, pair: PairInput, pref_first: bool, resp_first: bool, n: int, complete: Complete) -> Judgment:
        t, msgs = self.order_prompt(pair, pref_first, resp_first)
        completion = await complete(self.spec, msgs)
        parsed = parse_label(completion.text, AB, key=("answer_for_preference_1", "answer")) if completion.ok else None
        # Preference 1 is p iff pref_first; r (for p) is shown as A iff resp_first.
        correct_label = "A" if pref_first == resp_first else "B"
        score = None
        if parsed is not None and parsed.ok:
            score = 1.0 if parsed.value == correct_label else 0.0
        return to_judgment(
            kind=self.kind,
            dimension=f"order-{n}",
            spec=self.spec,
            version=t.version,
            completion=completion,
            parsed=parsed,
            scale=(0.0, 1.0),
            score=score,
            extra={"preference_first": pref_first, "response_first": resp_first, "correct": correct_label},
        )

    # -- win rate --------------------------------------------------------------------------
    async def compare(
        self,
        query: str,
        preference: str,
        opposed: str,
        model_x: str,
        pair_x: tuple[str, str],
        model_y: str,
        pair_y: tuple[str, str],
        complete: Complete,
    ) -> list[Judgment]:
        """Model X's (r, r^d) vs model Y's, judged in both presentation orders. Each judgment's
        score is X's outcome (1 win, 0.5 tie, 0 loss); ``extra`` names both models."""
        t = template("interpref", "compare")
        out = []
        for swapped in (False, True):
            (mx, px), (my, py) = (
                ((model_y, pair_y), (model_x, pair_x)) if swapped else ((model_x, pair_x), (model_y, pair_y))
            )
            user = t.text(
                "user",
                query=query,
                preference_1=preference,
                preference_2=opposed,
                x_1=px[0],
                x_2=px[1],
                y_1=py[0],
                y_2=py[1],
            )
            completion = await complete(self.spec, messages(t.fields["system"], user))
            parsed = parse_label(completion.text, XY, key=("winner",)) if completion.ok else None
            score = None
            if parsed is not None and parsed.ok and isinstance(parsed.value, str):  # parse_label's values are labels
                shown = {"X": 1.0, "Y": 0.0, "tie": 0.5}[parsed.value]
                score = 1.0 - shown if swapped else shown
            out.append(
                to_judgment(
                    kind=self.kind,
                    dimension="win",
                    spec=self.spec,
                    version=t.version,
                    completion=completion,
                    parsed=parsed,
                    scale=(0.0, 1.0),
                    score=score,
                    extra={"model_a": model_x, "model_b": model_y, "swapped": swapped},
                )
            )
        return out

    # -- two runs --------------------------------------------------------------------------
    async def judge_runs(
        self,
        query: str,
        preference: str,
        opposed: str,
        answers: dict[str, tuple[str, str]],
        complete: Complete,
    ) -> tuple[list[list[Judgment]], list[tuple[str, str]], list[list[Judgment]]]:
        """``prefscope pairwise``: ``answers`` maps each model to its (r, r^d), the answers of the
        run for p and the run for p^d. Returns each model's pass judgments (in ``answers`` order),
        every pair of models, and each pair's win judgments."""
        models = list(answers)
        passes = await asyncio.gather(
            *(self.judge_pair(PairInput(query, preference, opposed, *answers[m]), complete) for m in models)
        )
        pairs = list(combinations(models, 2))
        wins = await asyncio.gather(
            *(self.compare(query, preference, opposed, x, answers[x], y, answers[y], complete) for x, y in pairs)
        )
        return list(passes), pairs, list(wins)


# -- aggregation over stored judgments -------------------------------------------------------


def pass_instances(judgments: Iterable) -> list[list[bool]]:
    """The per-order outcomes of every decided ``pass`` judgment (LLM judges only)."""
    out = []
    for j in only(judgments, "llm"):
        if j.kind == "pairwise" and j.dimension == "pass" and j.parse_ok:
            out.append([bool(o) for o in j.extra["orders"]])
    return out


def pass_summary(judgments: Iterable) -> dict:
    """Pass rate and order disagreement (the judge's position bias) over decided instances."""
    judgments = list(judgments)
    inst = pass_instances(judgments)
    undecided = sum(
        1 for j in only(judgments, "llm") if j.kind == "pairwise" and j.dimension == "pass" and not j.parse_ok
    )
    return {
        "n": len(inst),
        "undecided": undecided,
        "pass_rate": pass_rate(inst),
        "order_disagreement": order_disagreement(inst),
    }


def win_rates(judgments: Iterable, models: Sequence[str] | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(models, win-rate matrix, Bradley–Terry coefficients) from ``win`` judgments (LLM only,
    parsed only). W[i, j] is the mean score of model i against j; NaN where they never met."""
    outcomes = [
        (j.extra["model_a"], j.extra["model_b"], j.score)
        for j in only(judgments, "llm")
        if j.kind == "pairwise" and j.dimension == "win" and j.parse_ok and j.score is not None
    ]
    names = list(models) if models is not None else sorted({m for a, b, _ in outcomes for m in (a, b)})
    matrix = win_rate_matrix(outcomes, names)
    return names, matrix, bradley_terry(matrix)
