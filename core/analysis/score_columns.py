"""Which scores a report shows by default, and what a score column is called.

Each is decided here once, for ``prefscope report``, ``prefscope export`` and the batch-end
summary alike::

    default_metrics({"mcq", "open"}, {("choice", "accuracy"), ("rubric", "alignment")})
    # -> ["accuracy", "rubric:alignment"]
    score_column_names([ScoreKey("rubric", "alignment", "llm", "openai:gpt-4o")])
    # -> {ScoreKey(...): "score_rubric_alignment"}
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

#: Query kinds answered by picking (scored by the answer parser: accuracy).
CHOICE_KINDS = ("mcq", "tf")
ACCURACY = "accuracy"
#: Open-query metrics in the order a default report prefers them, when judged.
OPEN_METRICS = ("rubric:alignment", "locomo:f1", "checklist:preference", "personalization:personalization")


def _is_choice_kind(query_kind: str | None) -> bool:
    # PrefEval MCQ plans carry answer_format "mcq-prefeval" where the query row is missing.
    return query_kind is not None and query_kind.split("-", 1)[0] in CHOICE_KINDS


def default_metrics(query_kinds: Iterable[str | None], judged: Iterable[tuple[str, str]]) -> list[str]:
    """The metrics to show when none is asked for: accuracy where the runs asked MCQ/TF queries,
    and for open queries rubric:alignment — or, when that was never judged, the first judged of
    :data:`OPEN_METRICS`, else the first other judged ``kind:dimension``. Both, accuracy first, for
    a mixed selection; rubric:alignment when there are no runs at all."""
    kinds = set(query_kinds)
    done = {f"{k}:{d}" for k, d in judged if (k, d) != ("choice", ACCURACY) and d != "*"}
    out = [ACCURACY] if any(_is_choice_kind(k) for k in kinds) else []
    if any(not _is_choice_kind(k) for k in kinds) or not out:
        preferred = [m for m in OPEN_METRICS if m in done]
        out.append(preferred[0] if preferred else min(done) if done else OPEN_METRICS[0])
    return out


@dataclass(frozen=True, order=True)
class ScoreKey:
    """What one score column holds: one judgment kind × dimension from one judge source and model."""

    kind: str
    dimension: str
    source: str
    judge_model: str


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "all"


def score_column_names(keys: Iterable[ScoreKey]) -> dict[ScoreKey, str]:
    """``score_<kind>_<dimension>`` (``score_rubric_alignment``, ``score_choice_accuracy``), then
    ``_<source>`` only when that kind × dimension comes from more than one source in the selection
    (``score_rubric_alignment_llm`` / ``_heuristic``), then ``_<judge model>`` only when one source
    has several judge models (``score_rubric_alignment_llm_openai_gpt_4o``). Lower case, anything but
    letters and digits as ``_``; a clash left after that gets ``_2``, ``_3`` … in key order."""
    by_metric: dict[tuple[str, str], list[ScoreKey]] = defaultdict(list)
    for key in sorted(set(keys)):
        by_metric[(key.kind, key.dimension)].append(key)
    names: dict[ScoreKey, str] = {}
    taken: set[str] = set()
    for (kind, dimension), group in sorted(by_metric.items()):
        sources = {k.source for k in group}
        for key in group:
            name = f"score_{_slug(kind)}_{_slug(dimension)}"
            if len(sources) > 1:
                name += f"_{key.source}"
            if sum(1 for k in group if k.source == key.source) > 1:
                name += f"_{_slug(key.judge_model)}"
            unique, n = name, 1
            while unique in taken:
                n += 1
                unique = f"{name}_{n}"
            taken.add(unique)
            names[key] = unique
    return names
