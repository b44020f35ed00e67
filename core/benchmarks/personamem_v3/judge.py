"""``pmv3-slice``: PersonaMem-v3's chatbot-task metrics as a judge with no model call
(``score_response_against_slice``, ``evaluation/metrics.py`` @ a24ea9ce; PROTOCOL.md §4.2-4.3).

The reply is first read as the official prompt asks for it: the ``response`` string of its fenced
```` ```json ```` block (or of a bare JSON object); any other reply is scored as written (ours: the
runner's parsing was not read). It is then scored against the query's frozen or rebuilt TARGET /
AVOID slice (``Query.meta["gt_slice"]``), with ``semantic`` = the bundled all-MiniLM-L6-v2 cosine.
``pmv3-slice-jaccard`` uses the official fallback instead (token Jaccard, what the official code
computes without sentence-transformers; scores run much lower), for comparison with such runs.

One judgment per metric (:data:`DIMENSIONS`; on a restraint query also :data:`HELD_BACK`, ours), each with the query's ``distance_bin`` /
``distance_tokens`` (the report's factor), task type, arm and restraint flag in ``extra``. A metric
judge (``judge_model`` ``metric:…``): its source is "parser", never pooled with LLM judges.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.benchmarks.personamem_v3 import semantic as S
from core.benchmarks.personamem_v3.metrics import item_text, score_response_against_slice
from core.judges.base import JudgeInput, Judgment
from core.judges.common import missing_input
from core.providers.calls import Complete

KIND = "pmv3-slice"
KIND_JACCARD = "pmv3-slice-jaccard"
VERSION = "personamem-v3-metrics-a24ea9c"
#: Its "metric:" prefix makes the judge source "parser" (core.judges.aggregate.source_of); the stored
#: name adds the semantic engine: ``metric:pmv3-slice@all-MiniLM-L6-v2@onnx-fp32`` / ``…@token-jaccard``.
JUDGE_MODEL = "metric:pmv3-slice"
BENCHMARK = "personamem-v3"
#: The official metric keys scored, in this order.
DIMENSIONS = (
    "held_out_hit",
    "held_out_score",
    "target_match_recall",
    "target_secondary_match",
    "avoid_leak_rate",
    "avoid_leak_flag",
    "carve_out_respect",
)
#: Ours, on restraint queries only: 1 when the answer matched neither the held-out preference nor an
#: AVOID item and respected a carve-out; the diagnosis's restraint step can read it.
HELD_BACK = "held_back"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def reply_text(raw: str) -> str:
    """The ``response`` field of the reply's JSON block, else the reply itself."""
    for candidate in [*(m.group(1).strip() for m in _FENCE.finditer(raw or "")), (raw or "").strip()]:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("response"), str):
            return value["response"]
    return raw or ""


def _extra(item: JudgeInput, engine_id: str) -> dict[str, Any]:
    meta = item.query.meta
    return {
        "benchmark": BENCHMARK,
        "user": item.bundle.user.id,
        "distance_bin": meta.get("distance_bin", "n/a"),
        "distance_tokens": meta.get("distance_tokens"),
        "task_type": meta.get("task_type"),
        "arm": meta.get("arm"),
        "restraint": meta.get("restraint") is True,
        "semantic": engine_id,
    }


class SliceJudge:
    kind = KIND
    applies_to = ("open",)
    engine_name = S.MINILM

    def __init__(self, model_id: str | None = None):
        self.name = self.kind
        self._engine: S.MiniLMCosine | S.TokenJaccard | None = None

    @property
    def engine(self) -> S.MiniLMCosine | S.TokenJaccard:
        if self._engine is None:
            self._engine = S.engine(self.engine_name)
        return self._engine

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        return score(item, self.kind, self.engine)


class JaccardSliceJudge(SliceJudge):
    kind = KIND_JACCARD
    engine_name = S.JACCARD


def score(item: JudgeInput, kind: str, engine: S.MiniLMCosine | S.TokenJaccard) -> list[Judgment]:
    meta = item.query.meta
    gt = meta.get("gt_slice")
    extra = _extra(item, engine.id)
    judge_model = f"{JUDGE_MODEL}@{engine.id}"
    if not isinstance(gt, dict):
        return [
            _failed(kind, d, judge_model, "not a PersonaMem-v3 chatbot query (no gt_slice)", extra) for d in DIMENSIONS
        ]
    target, avoid = list(gt.get("target") or []), list(gt.get("avoid") or [])
    response = reply_text(item.response_text)
    hashtags = [str(h) for h in meta.get("source_hashtags") or []]
    engine.prime([response, item.query.text, *(item_text(i) for i in [*target, *avoid])])
    s = score_response_against_slice(
        response,
        target,
        avoid,
        engine,
        action=meta.get("action"),
        user_query=item.query.text,
        event_hashtags=hashtags,
    )
    values = s.metrics()
    extra |= {"num_target": s.num_target, "num_avoid": s.num_avoid, "avoid_leak_indices": values["avoid_leak_indices"]}
    why = (
        f"TARGET {s.num_target} (held-out {_fmt(s.held_out_score)}), AVOID {s.num_avoid} "
        f"(leaked {len(s.avoid_leak_indices)}); similarity = max(hashtag overlap, {engine.id}), threshold 0.5"
    )
    if meta.get("restraint") is True:
        values[HELD_BACK] = int(not s.held_out_hit and not s.avoid_leak_flag and s.carve_out_respect == 1)
    out = []
    for d in [*DIMENSIONS, *([HELD_BACK] if HELD_BACK in values else [])]:
        value = values[d]
        if value is None:
            out.append(_failed(kind, d, judge_model, "the slice has no TARGET item (no held-out preference)", extra))
            continue
        out.append(
            Judgment(
                kind=kind,
                dimension=d,
                score=float(value),
                rationale=why,
                raw=response,
                parse_ok=True,
                judge_model=judge_model,
                prompt_version=VERSION,
                scale_min=0.0,
                scale_max=1.0,
                extra=extra,
            )
        )
    return out


def _fmt(x: float | None) -> str:
    return "none" if x is None else f"{x:.3f}"


def _failed(kind: str, dimension: str, judge_model: str, reason: str, extra: dict) -> Judgment:
    return missing_input(
        kind=kind,
        dimension=dimension,
        judge_model=judge_model,
        version=VERSION,
        reason=reason,
        scale=(0.0, 1.0),
        extra=extra,
    )
