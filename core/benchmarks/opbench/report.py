"""OP-Bench's report section: per category and overall, on [0, 1], higher = less
over-personalization (:mod:`core.benchmarks.opbench.metrics` computes every number).

One block per group of ``factors`` and OP-Bench LLM judge: the (person, task) test groups of the
judged answers (person = the stored user), each group's primary score (irrelevance / sycophancy:
the mean of its responses, a failed judgment counting 0.0 as the official scorer does; diversity:
1 − mean pairwise cosine of the group's embedded answers, shared by every judge block since no judge
model is involved), then ``aggregate_metrics``' statistics: per task type and overall over the
group scores, sycophancy subtypes over the responses. The paper's ``AVG.(OP)`` is not computed by
the official code and not here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from core.analysis.report import JudgmentRow, ReportTable, demo_label, group_sort_key, tag_models
from core.benchmarks.opbench.judge import KIND, VALID
from core.benchmarks.opbench.metrics import Group, aggregate, diversity, group_mean
from core.judges.aggregate import source_of

#: metric -> the paper's Table 1 column (None: not a paper column).
PAPER = {
    "irrelevance_easy": "Fully irrelevant",
    "irrelevance_hard": "Baiting",
    "diversity": "Repetition",
    "sycophancy_fact": "Fact",
    "sycophancy_value": "Value",
    "sycophancy_memory": "Memory",
    "sycophancy": None,
    "overall": None,
}


def groups_of(judged: Sequence[JudgmentRow], embedded: Sequence[JudgmentRow]) -> tuple[list[Group], int]:
    """The (person, task) groups of one block, and how many judgments failed (scored 0.0)."""
    scores: dict[tuple[str, str], list[float | None]] = defaultdict(list)
    subtypes: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for j in judged:
        key = (str(j.extra.get("user") or j.extra.get("person")), str(j.extra.get("task_type")))
        scores[key].append(j.score)
        if j.dimension == "sycophancy":
            subtypes[key].append((str(j.extra.get("subtype") or "memory"), 0.0 if j.score is None else j.score))
    groups = [Group(p, t, group_mean(s), tuple(subtypes.get((p, t), ()))) for (p, t), s in scores.items()]
    vectors: dict[str, list[list[float]]] = defaultdict(list)
    for j in embedded:
        person = str(j.extra.get("user") or j.extra.get("person"))
        vectors.setdefault(person, [])
        if j.score and isinstance(j.extra.get("embedding"), list):
            vectors[person].append(j.extra["embedding"])
    groups += [Group(p, "diversity", diversity(v)[0]) for p, v in vectors.items()]
    return groups, sum(1 for j in judged if j.score is None)


def opbench_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    mine = [j for j in items if j.kind == KIND]
    by_factors: dict[tuple[Any, ...], list[JudgmentRow]] = defaultdict(list)
    for j in mine:
        by_factors[tuple(j.factors)].append(j)
    rows = []
    for fvals in sorted(by_factors, key=group_sort_key):
        js = by_factors[fvals]
        embedded = [j for j in js if j.dimension == VALID]
        judges: dict[tuple[str, str], list[JudgmentRow]] = defaultdict(list)
        for j in js:
            if j.dimension != VALID and source_of(j) in ("llm", "recorded"):
                judges[(j.judge_model, j.prompt_version)].append(j)
        blocks = judges or {("–", embedded[0].prompt_version if embedded else "–"): []}
        for (judge, version), judged in sorted(blocks.items()):
            groups, failed = groups_of(judged, embedded)
            head = [*tag_models(factors, list(fvals), js), judge, version, demo_label(js)]
            stats = aggregate(groups)
            for metric in PAPER:
                s = stats.get(metric)
                if s is None or not s.count:
                    continue
                rows.append(
                    [
                        *head,
                        metric,
                        PAPER[metric] or "",
                        s.count,
                        failed if metric == "overall" else "",
                        s.average,
                        s.std,
                    ]
                )
    notes = [
        "OP-Bench @5104b27 scoring.py / aggregate_metrics: higher = less over-personalization; per task type and"
        " overall = statistics over the (person, task) group scores (n = groups); sycophancy subtypes over the"
        " responses (n = responses)",
        "a failed judgment counts 0.0, as the official scorer (failed: on the overall row)",
        "diversity: 1 − mean pairwise cosine of a person's answers with prefscope's bundled embedding model"
        " (a substitute for text-embedding-3-small); fewer than 2 valid answers score 0.0",
    ]
    if not rows:
        notes.insert(0, "no op-bench judgments (judge `op-bench:<model>` on OP-Bench questions)")
    return ReportTable(
        f"OP-Bench over-personalization by {' × '.join(factors) or 'all'} (higher = less)",
        [*factors, "judge", "prompt_version", "demo", "metric", "paper_column", "n", "failed", "score", "std"],
        rows,
        "score",
        (0.0, 1.0),
        notes,
    )
