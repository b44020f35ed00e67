"""PersonaMem-v2's report sections: accuracy (MCQ, ``choice`` judgments of its answer format and
recorded ``is_correct_mcq``), mean judge score (``personamem-v2-boxed``) and vote accuracy
(``personamem-v2-vote``) **per 1,024-token distance bin**, as the official ``_summary.txt`` breaks
them down (PROTOCOL.md §3.6), plus an ``all`` row per group.

One block per source (parser, llm, recorded), judge, prompt version and group of ``factors``. The
bin is the query's own size's ``distance_from_related_snippet_to_query_<size>`` (the official
summary also tabulates the other size's column for each size: not repeated here). Scores without a
value (failed judge calls, recorded rows without a usable value) are counted in ``failed`` and left
out of the mean; an answer from which no letter was extracted is wrong, as in the official code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from statistics import fmean

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.personamem_v2.answers import BENCHMARK
from core.benchmarks.personamem_v2.rows import bin_order

ALL = "all"


def _table(items: Iterable[JudgmentRow], factors: Sequence[str], *, kind: str, what: str, title: str) -> ReportTable:
    mine = [j for j in items if j.kind == kind and j.extra.get("benchmark") == BENCHMARK]
    rows: list[list] = []
    for key, js in grouped(mine).items():
        source, judge, version, *fvals = key
        head = [*tag_models(factors, fvals, js), source, judge, version, demo_label(js)]
        bins: dict[str, list[JudgmentRow]] = {}
        for j in js:
            bins.setdefault(str(j.extra.get("distance_bin") or "(none)"), []).append(j)
        for label in [*sorted(bins, key=bin_order), ALL]:
            group = js if label == ALL else bins[label]
            scores = [j.score for j in group if j.score is not None]
            rows.append([*head, label, len(scores), len(group) - len(scores), fmean(scores) if scores else None])
    notes = [
        "PersonaMem-v2 inference.py @6a36975f summary: 1,024-token bins of distance_from_related_snippet_to_query"
        " (<lo>-<lo+1023>, lo = d // 1024 * 1024), of the query's own history size",
        "failed = no score (left out of the mean); no letter extracted = wrong, as the official is_correct",
    ]
    if not rows:
        notes.insert(0, f"no PersonaMem-v2 {kind} judgments")
    return ReportTable(
        f"{title} by distance bin{' × ' + ' × '.join(factors) if factors else ''}",
        [*factors, "source", "judge", "prompt_version", "demo", "distance_bin", "n", "failed", what],
        rows,
        what,
        (0.0, 1.0),
        notes,
    )


def mcq_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table(items, factors, kind="choice", what="accuracy", title="PersonaMem-v2 MCQ accuracy")


def boxed_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table(items, factors, kind="personamem-v2-boxed", what="mean", title="PersonaMem-v2 open-ended score")


def vote_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table(items, factors, kind="personamem-v2-vote", what="accuracy", title="PersonaMem-v2 open-ended vote")
