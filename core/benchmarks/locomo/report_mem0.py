"""mem0's LoCoMo tables (mem0ai/mem0 @ b3ede5b, ``evaluation/generate_scores.py``): per category
(1-4; mem0 skips 5) the mean of one score and the count, then the overall mean over every scored
question. One section per score: the LLM judge's "J" (``mem0``/``accuracy``), ``mem0-f1`` and
``mem0-bleu1``; scores computed here (``mem0:<model>``, ``metric:mem0-*``) and scores recorded in an
imported mem0 file (``recorded:mem0-evals…``) are separate blocks, never pooled. Values are not
rounded (mem0 prints 4 decimals)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.locomo.format import category_label

CATEGORIES = (1, 2, 3, 4)
OVERALL = "overall"


def mem0_metrics(items: Sequence[JudgmentRow]) -> list[tuple[str, int, float | None]]:
    scored = [(j.extra.get("category"), j.score) for j in items if j.score is not None]
    out: list[tuple[str, int, float | None]] = []
    for category in CATEGORIES:
        scores = [s for c, s in scored if c == category]
        out.append((category_label(category), len(scores), sum(scores) / len(scores) if scores else None))
    every = [s for _, s in scored]
    out.append((OVERALL, len(every), sum(every) / len(every) if every else None))
    return out


def _table(kind: str, title: str, items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    rows = []
    for key, js in grouped(j for j in items if j.kind == kind).items():
        _, judge, version, *fvals = key
        failed = sum(1 for j in js if j.score is None)
        head = [*tag_models(factors, fvals, js), judge, version, demo_label(js)]
        metrics = mem0_metrics(js)
        if "category" in factors:
            metrics = [m for m in metrics if m[1] or m[0] == OVERALL]
        rows += [[*head, metric, n, failed, mean] for metric, n, mean in metrics]
    notes = [
        "mem0 generate_scores.py @b3ede5b: mean per category (1-4) and over all scored questions",
        "recorded:* rows are the scores the imported file carries; the others were computed here",
        "failed = not scored (category 5, which mem0 skips; no gold; unreadable judge reply)",
    ]
    return ReportTable(
        f"{title} by {' × '.join(factors) or 'all'}",
        [*factors, "judge", "prompt_version", "demo", "metric", "n", "failed", "mean"],
        rows,
        "mean",
        (0.0, 1.0),
        notes,
    )


def mem0_j_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table("mem0", "mem0 LLM judge (J)", items, factors)


def mem0_f1_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table("mem0-f1", "mem0 F1", items, factors)


def mem0_bleu1_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table("mem0-bleu1", "mem0 BLEU-1", items, factors)
