"""Aggregating judgments without mixing what must not be mixed.

Rules every aggregate in prefscope follows (and these helpers enforce):

- heuristic judgments (``demo:heuristic``) are NEVER pooled with LLM-judge scores; they are
  aggregated on their own when asked for explicitly (``source="heuristic"``);
- human judgments are a separate source (``source="human"``), compared with LLM ones through
  agreement statistics, not averaged with them;
- parser scores (MCQ/TF answer parsers, LoCoMo F1) are their own source (``"parser"``);
- recorded scores (imported with answers made elsewhere: a LongMemEval ``autoeval_label``, mem0's
  ``llm_score`` …) are their own source (``"recorded"``), never pooled with judgments made here;
- parse failures carry no score: they are counted (``failed``), never read as 0;
- different judge models, prompt versions and dimensions are separate groups.

Helpers accept anything with the Judgment attributes (``core.judges.base.Judgment``, the stored
rows of ``storage.runs.StoredJudgment`` or ``core.analysis.report.JudgmentRow``). The tables of
``prefscope report`` (:mod:`core.analysis.report`) are built on :func:`score_summary` and
:func:`agreement`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from core.metrics import bootstrap_ci, cohen_kappa, spearman

Source = Literal["llm", "heuristic", "human", "parser", "recorded"]
#: ``judge_model`` prefixes of the deterministic scorers (answer parsers, reference metrics such as
#: ``parser:choice`` and ``metric:locomo``): no model call, so their own source, never "llm". Read
#: from the stored judge model, so rows stored before this source existed read the same way.
PARSER_PREFIXES = ("parser:", "metric:")
#: ``judge_model`` prefix of scores imported with their answers (``recorded:gpt-4o-2024-08-06``):
#: the judge named by the file that recorded them, which prefscope did not run.
RECORDED_PREFIX = "recorded:"


def source_of(j: Any) -> Source:
    if getattr(j, "human", False):
        return "human"
    if getattr(j, "heuristic", False):
        return "heuristic"
    judge_model = str(getattr(j, "judge_model", ""))
    if judge_model.startswith(RECORDED_PREFIX):
        return "recorded"
    if judge_model.startswith(PARSER_PREFIXES):
        return "parser"
    return "llm"


def only(judgments: Iterable[Any], source: Source = "llm") -> list[Any]:
    """Judgments of one source. The default keeps LLM judges only: heuristic and human are out."""
    return [j for j in judgments if source_of(j) == source]


@dataclass(frozen=True)
class ScoreSummary:
    #: Judgments with a score; ``failed`` = parse failures (no score, never read as 0).
    n: int
    failed: int
    mean: float | None
    #: BCa bootstrap 95% interval (:func:`core.metrics.bootstrap_ci`, seed 0).
    ci_low: float | None
    ci_high: float | None


def score_summary(judgments: Iterable[Any]) -> ScoreSummary:
    """n, failures, mean and its bootstrap 95% interval of ONE group of judgments (the caller
    keeps sources apart)."""
    js = list(judgments)
    scores = [j.score for j in js if j.parse_ok and j.score is not None]
    lo, hi = bootstrap_ci(scores)
    failed = sum(1 for j in js if not j.parse_ok)  # a parsed "not applicable" (no score) is not a failure
    return ScoreSummary(len(scores), failed, sum(scores) / len(scores) if scores else None, lo, hi)


@dataclass(frozen=True)
class Group:
    kind: str
    dimension: str
    judge_model: str
    prompt_version: str
    source: Source
    n: int
    failed: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None


def summarize(judgments: Iterable[Any], source: Source = "llm") -> list[Group]:
    """Mean score (with a bootstrap 95% interval) per kind × dimension × judge model × prompt
    version, within ONE source. Failures are counted in ``failed``."""
    groups: dict[tuple[str, str, str, str], list[Any]] = defaultdict(list)
    for j in only(judgments, source):
        groups[(j.kind, j.dimension, j.judge_model, j.prompt_version)].append(j)
    out = []
    for (kind, dim, model, version), js in sorted(groups.items()):
        s = score_summary(js)
        out.append(Group(kind, dim, model, version, source, s.n, s.failed, s.mean, s.ci_low, s.ci_high))
    return out


@dataclass(frozen=True)
class Agreement:
    n: int
    kappa: float | None
    spearman: float | None


def _item(j: Any) -> Hashable:
    return (j.response_id, j.kind, j.dimension)


def agreement(a: Iterable[Any], b: Iterable[Any], *, key: Callable[[Any], Hashable] = _item) -> Agreement:
    """Agreement between two sets of judgments (e.g. human vs an LLM judge) on the items both
    scored successfully, matched by ``key`` (default: response, kind, dimension)."""
    left = {key(j): j.score for j in a if j.parse_ok and j.score is not None}
    right = {key(j): j.score for j in b if j.parse_ok and j.score is not None}
    common = sorted(set(left) & set(right), key=repr)
    xs = [left[k] for k in common]
    ys = [right[k] for k in common]
    return Agreement(len(common), cohen_kappa(xs, ys), spearman(xs, ys))
