"""PersonaMem-v3's report section: the chatbot task's held-out hit rate and AVOID leak rate **per
``distance_bin``** (PROTOCOL.md §4.3, §5), with an ``all`` row per block.

One block per source (parser = prefscope's ``pmv3-slice`` metric; recorded = the numbers a
``results.csv`` carried), judge, version and group of ``factors``; within a block, one row per
bin: answers, the mean ``held_out_hit`` (hit rate), the mean ``avoid_leak_flag`` (share of answers
that leak an AVOID item), the mean ``avoid_leak_rate``, ``target_match_recall`` and
``carve_out_respect``. Each mean is over the answers that have that metric (a missing held-out
item is no score, not a miss). ``results.csv`` does not carry the distance: recorded rows are in
the bin ``(not recorded)``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from statistics import fmean

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.personamem_v3.judge import KIND, KIND_JACCARD
from core.benchmarks.personamem_v3.metrics import bin_order

ALL = "all"
NOT_RECORDED = "(not recorded)"
COLUMNS = ("held_out_hit", "avoid_leak_flag", "avoid_leak_rate", "target_match_recall", "carve_out_respect")


def _answer_key(j: JudgmentRow) -> str:
    return j.response_id or str(id(j))


def _table(items: Iterable[JudgmentRow], factors: Sequence[str], kind: str) -> ReportTable:
    mine = [j for j in items if j.kind == kind and j.dimension in COLUMNS]
    rows: list[list] = []
    for key, js in grouped(mine).items():
        source, judge, version, *fvals = key
        head = [*tag_models(factors, fvals, js), source, judge, version, demo_label(js)]
        bins: dict[str, list[JudgmentRow]] = defaultdict(list)
        for j in js:
            bins[str(j.extra.get("distance_bin") or NOT_RECORDED)].append(j)
        for label in [*sorted(bins, key=bin_order), ALL]:
            group = js if label == ALL else bins[label]
            answers = {_answer_key(j) for j in group}
            means = []
            for dim in COLUMNS:
                scores = [j.score for j in group if j.dimension == dim and j.score is not None]
                means.append(fmean(scores) if scores else None)
            rows.append([*head, label, len(answers), *means])
    notes = [
        "PersonaMem-v3 evaluation/metrics.py @a24ea9ce score_response_against_slice; similarity = max(hashtag "
        "overlap, semantic), threshold 0.5; distance_bin = 1,024-wide bins of distance_tokens "
        "(200 x events after the latest hashtag-sharing event), n/a when no event shares a hashtag",
        "held_out_hit = hit rate; avoid_leak_flag = share of answers leaking an AVOID item (lower is better)",
        "results.csv does not record distance_tokens: recorded rows are in the bin '(not recorded)'",
    ]
    if kind == KIND_JACCARD:
        notes.insert(0, "semantic = token Jaccard (the official fallback without sentence-transformers)")
    if not rows:
        notes.insert(0, f"no {kind} judgments")
    return ReportTable(
        f"PersonaMem-v3 chatbot held-out hit and leak by distance bin{' × ' + ' × '.join(factors) if factors else ''}",
        [*factors, "source", "judge", "prompt_version", "demo", "distance_bin", "n", *COLUMNS],
        rows,
        "held_out_hit",
        (0.0, 1.0),
        notes,
    )


def slice_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table(items, factors, KIND)


def jaccard_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    return _table(items, factors, KIND_JACCARD)
