"""How much an answer's score moves when the same thing is asked again.

Two tables, one rule for a verdict:

- :func:`repeat_table` — repeats of a cell (``RunSpec.repeat``: the same prompt sampled again).
  An *item* is a cell without its repeat number; per group of ``by`` factors × judge: items seen at
  least twice, answers per item, the mean score, the mean per-item variance (sample variance,
  ddof 1) and standard deviation, and the share of items whose *verdict* flips across repeats with
  its Wilson 95% interval.
- :func:`retest_table` — a judge scoring the same answer again (``prefscope judge
  --judge-repeats``): per judge × dimension, answers judged at least twice, the share whose scores
  all agree (exact) and agree within 1 point, the mean per-answer standard deviation and the
  verdict flip share. Parse failures carry no score and are left out (counted in ``failed``).

A verdict is the pass mark prefscope reads "applied" with (:data:`core.analysis.diagnosis.
APPLIED_RULES`: rubric alignment ≥ 4, checklist ≥ 7, choice right …) when the metric's dimension
has one, else "the score itself" (any change of score is a flip). The rule used is in each row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from statistics import mean, pstdev, stdev, variance

from core.analysis.diagnosis import APPLIED_RULES
from core.analysis.report import JudgmentRow, ReportTable, group_sort_key
from core.judges.aggregate import source_of
from core.metrics import wilson_ci


def pass_mark(kind: str, dimension: str) -> float | None:
    """The score at or above which an answer counts as applying the preference, when known."""
    for rule_kind, marks, _ in APPLIED_RULES:
        if rule_kind == kind and dimension in marks:
            return marks[dimension]
    return None


def verdict_rule(kind: str, dimension: str) -> str:
    mark = pass_mark(kind, dimension)
    return "score changes" if mark is None else f"passes {mark:g}"


def flips(scores: Sequence[float], mark: float | None) -> bool:
    """The verdicts of these scores of one item disagree."""
    return len({s >= mark for s in scores} if mark is not None else set(scores)) > 1


def repeat_table(items: Iterable[JudgmentRow], label: str, by: Sequence[str], n_item_factors: int) -> ReportTable:
    """Rows' factors are ``(*by values, *item identity values)``; the identity leaves the repeat out."""
    groups: dict[tuple, dict[Hashable, list[float]]] = defaultdict(lambda: defaultdict(list))
    failed: dict[tuple, int] = defaultdict(int)
    kinds: dict[tuple, tuple[str, str]] = {}
    nb = len(by)
    for j in items:
        key = (*j.factors[:nb], source_of(j), j.judge_model, j.prompt_version, j.dimension)
        kinds[key] = (j.kind, j.dimension)
        if not (j.parse_ok and j.score is not None):
            failed[key] += 1
            continue
        groups[key][tuple(j.factors[nb : nb + n_item_factors])].append(float(j.score))
    rows = []
    for key in sorted(groups, key=group_sort_key):
        per_item = [s for s in groups[key].values() if len(s) >= 2]
        mark = pass_mark(*kinds[key])
        flipped = sum(1 for s in per_item if flips(s, mark))
        lo, hi = wilson_ci(flipped, len(per_item))
        rows.append(
            [
                *key,
                len(per_item),
                round(mean(len(s) for s in per_item), 2) if per_item else None,
                failed[key],
                mean(x for s in per_item for x in s) if per_item else None,
                mean(variance(s) for s in per_item) if per_item else None,
                mean(stdev(s) for s in per_item) if per_item else None,
                verdict_rule(*kinds[key]),
                flipped / len(per_item) if per_item else None,
                lo,
                hi,
            ]
        )
    notes = [
        "items = cells answered at least twice (same case, model and parameters; repeats only differ by sampling)",
        "variance and sd are per item (ddof 1), then averaged; flip = the item's verdicts disagree across repeats",
    ]
    if not rows:
        notes.insert(0, f"no repeated {label} scores in the selected runs (batch --repeats N makes them)")
    return ReportTable(
        f"{label} across repeats by {' × '.join(by) or 'all'}",
        [*by, "source", "judge", "prompt_version", "dimension", "items", "repeats", "failed", "mean"]
        + ["item_variance", "item_sd", "verdict", "flip_rate", "flip_ci_low", "flip_ci_high"],
        rows,
        "flip_rate",
        (0.0, 1.0),
        notes,
    )


def retest_table(items: Iterable[JudgmentRow], label: str) -> ReportTable:
    """Test–retest of each judge on the answers it judged more than once (every stored judgment
    counts here, not only the latest)."""
    groups: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failed: dict[tuple, int] = defaultdict(int)
    kinds: dict[tuple, tuple[str, str]] = {}
    for j in items:
        key = (source_of(j), j.judge_model, j.prompt_version, j.dimension)
        kinds[key] = (j.kind, j.dimension)
        if not (j.parse_ok and j.score is not None) or j.response_id is None:
            failed[key] += 1
            continue
        groups[key][j.response_id].append(float(j.score))
    rows = []
    for key in sorted(groups, key=group_sort_key):
        again = [s for s in groups[key].values() if len(s) >= 2]
        n = len(again)
        mark = pass_mark(*kinds[key])
        flipped = sum(1 for s in again if flips(s, mark))
        rows.append(
            [
                *key,
                n,
                round(mean(len(s) for s in again), 2) if again else None,
                failed[key],
                sum(1 for s in again if len(set(s)) == 1) / n if n else None,
                sum(1 for s in again if max(s) - min(s) <= 1) / n if n else None,
                mean(pstdev(s) for s in again) if again else None,
                verdict_rule(*kinds[key]),
                flipped / n if n else None,
                *wilson_ci(flipped, n),
            ]
        )
    notes = ["answers = responses this judge scored at least twice; every judgment counts, not only the latest"]
    if not rows:
        notes.insert(0, f"no {label} judgments in the selected runs")
    return ReportTable(
        f"{label}: judge test–retest",
        ["source", "judge", "prompt_version", "dimension", "answers", "judgings", "failed", "exact", "within1"]
        + ["answer_sd", "verdict", "flip_rate", "flip_ci_low", "flip_ci_high"],
        rows,
        "exact",
        (0.0, 1.0),
        notes,
    )
