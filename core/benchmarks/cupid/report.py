"""CUPID's report sections (``prefscope report --cupid``): preference matching P/R/F1 and the
generation average, aggregated as CUPID's evaluation/pipeline/result.py @a8560ca does. Judgment
rows in, :class:`core.analysis.report.ReportTable` out, grouped as every report table is."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.cupid.judge_matching import ZERO, instance_counts, micro_prf, status_counts
from core.judges.aggregate import source_of


def matching_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    """CUPID preference matching: micro-averaged P/R/F1 per group (LLM judges only), counting and
    excluding instances as CUPID's aggregation does (see :mod:`core.benchmarks.cupid.judge_matching`)."""
    rows = []
    zero: list[str] = []
    excluded: list[str] = []
    for key, js in grouped(j for j in items if source_of(j) == "llm").items():
        _, judge, version, *fvals = key
        extras = [j.extra for j in js]
        counted = [e for e in extras if instance_counts(e) is not None]
        statuses = status_counts(extras)
        zero += [_instance(e) for e in extras if e.get("cupid_status") in ZERO]
        excluded += [
            f"{_instance(e)} ({e.get('cupid_status', 'failed')})" for e in extras if instance_counts(e) is None
        ]
        prf = micro_prf(extras)
        rows.append(
            [
                *tag_models(factors, fvals, js),
                *(judge, version, demo_label(js)),
                *(len(counted), sum(statuses[s] for s in ZERO), statuses["match_failed"]),
                *(len(extras) - len(counted), prf.precision, prf.recall, prf.f1),
            ]
        )
    notes = [
        "CUPID aggregation (evaluation/pipeline/result.py @a8560ca): micro-averaged over counted instances,"
        " Fully 1 / Partially 0.5 / other labels 0; empty inferences and context-length cuts count as 0 with"
        " their gold items (zero); a failed matcher counts with no matches (match_failed); a missing"
        " '### Most Likely Preference' heading or a decomposer failure is excluded, as CUPID does",
        "prefscope decomposes with the judge model; CUPID uses gpt-4o-2024-11-20 whatever the evaluator",
    ]
    if zero:
        notes.append(f"counted as zero: {', '.join(zero)}")
    if excluded:
        notes.append(f"excluded: {', '.join(excluded)}")
    if not rows:
        notes.insert(0, "no preference-matching judgments (judge `matching:<model>` on cupid-infer runs)")
    return ReportTable(
        f"preference matching by {' × '.join(factors) or 'all'}",
        [
            *factors,
            "judge",
            "prompt_version",
            "demo",
            "n",
            "zero",
            "match_failed",
            "excluded",
            "precision",
            "recall",
            "f1",
        ],
        rows,
        "f1",
        (0.0, 1.0),
        notes,
    )


def cupid_generation_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    """CUPID's generation average per group (LLM judges only): Σ score / n over every judged
    response, its 0s included (judge errors, no score heading), as ``process_generation_result``."""
    rows = []
    zero: list[str] = []
    for key, js in grouped(j for j in items if source_of(j) == "llm").items():
        _, judge, version, *fvals = key
        scored = [j for j in js if j.score is not None]
        zero += [
            f"{_instance(j.extra)} ({j.extra['cupid_status']})"
            for j in scored
            if j.extra.get("cupid_status", "ok") != "ok"
        ]
        mean = sum(j.score for j in scored if j.score is not None) / len(scored) if scored else None
        rows.append(
            [
                *tag_models(factors, fvals, js),
                *(judge, version, demo_label(js)),
                *(len(scored), sum(1 for j in scored if j.score == 0), len(js) - len(scored), mean),
            ]
        )
    notes = [
        "CUPID average_score (evaluation/pipeline/result.py @a8560ca): mean over all judged responses, a judge"
        " error or a reply without '### Evaluation Score' scored 0 and counted; not a bootstrap mean"
    ]
    if zero:
        notes.append(f"scored 0 by CUPID's rule: {', '.join(zero)}")
    if not rows:
        notes.insert(0, "no checklist judgments (judge `checklist:<model>` on cupid-generate runs)")
    return ReportTable(
        f"CUPID generation score by {' × '.join(factors) or 'all'}",
        [*factors, "judge", "prompt_version", "demo", "n", "zeros", "not_scored", "average_score"],
        rows,
        "average_score",
        (1.0, 10.0),
        notes,
    )


def _instance(extra: dict) -> str:
    return str(extra.get("instance") or "?")
