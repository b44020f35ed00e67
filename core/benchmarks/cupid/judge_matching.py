"""CUPID preference matching exactly as the official code (github.com/kixlab/CUPID @ a8560cab,
evaluation/modules/preference_inferrer.py, preference_matcher.py, pipeline/evaluate.py, result.py).

Per instance: take the inferred line after ``### Most Likely Preference``
(:func:`core.benchmarks.cupid.methods.inferred_preference`), decompose it into a checklist (the repo's
decomposer prompt), then two matcher calls: the inferred checklist against the gold preference
(precision) and the dataset's gold checklist against the inferred line (recall). Each returned
entry scores 1 / 0.5 / 0 by its exact label; the instance keeps four counts (:class:`CupidCounts`)
and :func:`micro_prf` micro-averages them over instances as CUPID's ``calculate_prf`` does.

Which instances count (``extra["cupid_status"]``, PROTOCOL §6):

* ``ok`` – counted;
* ``empty`` – heading present, empty line: counted as zero with its gold items (CUPID would send
  ``""`` on; prefscope short-circuits to the zero that CUPID writes for a context-length cut);
* ``context_length`` – the inference hit the context window: counted as zero (:meth:`context_length_cut`);
* ``match_failed`` – a matcher call or parse failed: counted with both match lists empty;
* ``no_heading`` / ``decompose_failed`` – excluded (CUPID raises before writing the instance):
  stored with ``parse_ok=False`` and never averaged.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.benchmarks.cupid.methods import NoPreferenceHeading, inferred_preference
from core.benchmarks.cupid.metrics import CupidCounts, cupid_prf
from core.benchmarks.cupid.parsing import cupid_parse_json
from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input, numbered
from core.judges.templates import template
from core.metrics import PRF
from core.providers.base import ModelSpec
from core.providers.calls import Complete, Completion

#: Methods whose final answer is an inferred preference (what this judge scores).
INFERENCE_METHODS = ("cupid-infer",)
#: ``match_label_to_score``: exact strings; any other value (``fully covered``, none) is 0.
LABEL_SCORES = {"Fully Covered": 1.0, "Partially Covered": 0.5}
COUNTED = ("ok", "empty", "context_length", "match_failed")
ZERO = ("empty", "context_length")
EXCLUDED = ("no_heading", "decompose_failed")
SCALE = (0.0, 1.0)
#: CUPID's PreferenceDecomposer is fixed to this model whatever ``--evaluator`` says.
CUPID_DECOMPOSER_MODEL = "gpt-4o-2024-11-20"


@dataclass
class Decomposition:
    items: list[str]
    raw: str
    version: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Match:
    """One matcher call: a score per RETURNED entry (not per checklist item)."""

    scores: list[float]
    raw: str
    labels: list[object] = field(default_factory=list)
    reasonings: list[object] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


async def decompose(preference: str, spec: ModelSpec, complete: Complete) -> Decomposition:
    t = template("cupid", "decompose")
    # CUPID formats both templates with preferences=…; the system prompt has no such field.
    msgs = messages(t.text("system", preferences=preference), t.text("user", preferences=preference))
    return parse_decomposition(await complete(spec, msgs), t.version)


def parse_decomposition(completion: Completion, version: str) -> Decomposition:
    """CUPID's ``parse_json(reply)["checklist"]``; any failure is the decomposer's failure. An empty
    list is accepted (n_predicted = 0) and items are kept as returned."""
    if not completion.ok:
        return Decomposition([], completion.text, version, f"judge call failed: {completion.error}")
    try:
        items = cupid_parse_json(completion.text)["checklist"]
    except (ValueError, KeyError, TypeError) as exc:
        return Decomposition([], completion.text, version, f"CUPID parse_json found no 'checklist': {exc!r}")
    if not isinstance(items, list):
        return Decomposition([], completion.text, version, "'checklist' is not a list")
    return Decomposition([i if isinstance(i, str) else json.dumps(i) for i in items], completion.text, version)


def matcher_system() -> str:
    """The matcher's system prompt with the 8 published examples (fixed for every call)."""
    examples = template("cupid", "match_examples").fields["text"]
    return template("cupid", "match").text("system", examples=examples)


async def match(checklist: list[str], preference: str, spec: ModelSpec, complete: Complete) -> Match:
    t = template("cupid", "match")
    user = t.text("user", preference=preference, checklist=numbered(checklist))
    completion = await complete(spec, messages(matcher_system(), user))
    if not completion.ok:
        return Match([], completion.text, error=f"judge call failed: {completion.error}")
    return parse_match(completion.text)


def parse_match(text: str) -> Match:
    """``parse_json(reply)["results"]`` scored entry by entry; no count or index check."""
    try:
        results = cupid_parse_json(text)["results"]
        entries = [e if isinstance(e, dict) else {} for e in results]
    except (ValueError, KeyError, TypeError) as exc:
        return Match([], text, error=f"CUPID parse_json found no 'results' list: {exc!r}")
    labels = [e.get("label") for e in entries]
    scores = [LABEL_SCORES.get(lab, 0.0) if isinstance(lab, str) else 0.0 for lab in labels]
    return Match(scores, text, labels, [e.get("reasoning") for e in entries])


class PreferenceMatchingJudge:
    kind = "matching"
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature)
        self.name = f"matching:{model_id}"

    @property
    def version(self) -> str:
        return f"{template('cupid', 'decompose').version}+{template('cupid', 'match').version}"

    def _fail(self, reason: str) -> list[Judgment]:
        return [
            missing_input(
                kind=self.kind, dimension=d, judge_model=self.spec.id, version=self.version, reason=reason, scale=SCALE
            )
            for d in ("precision", "recall", "f1")
        ]

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        if item.plan.method not in INFERENCE_METHODS:
            return self._fail(
                f"preference matching scores an inferred preference (method {', '.join(INFERENCE_METHODS)});"
                f" this run used {item.plan.method!r}"
            )
        gold = item.query.gold_preference or item_preference(item)
        if not gold:
            return self._fail("the query has no gold preference")
        base = {"instance": f"{item.bundle.user.id}/{item.query.id}"}
        try:
            inferred = inferred_preference(item.response_text)
        except NoPreferenceHeading as exc:
            return self._excluded("no_heading", str(exc), item.response_text, base)
        return await self.score(gold, list(item.query.checklist), inferred, complete, base)

    async def score(
        self, gold: str, gold_checklist: list[str], inferred: str, complete: Complete, extra: dict | None = None
    ) -> list[Judgment]:
        """P/R/F1 of one inferred preference line against the gold preference and checklist."""
        extra = dict(extra or {}) | {"inferred_preference": inferred, "decomposer_model": self.spec.id}
        if not gold_checklist:  # CUPID ships one; other datasets: decompose the gold (prefscope's)
            gold_dec = await decompose(gold, self.spec, complete)
            if not gold_dec.ok:
                return self._excluded(
                    "decompose_failed", f"decomposing the gold preference: {gold_dec.error}", "", extra
                )
            gold_checklist, extra["gold_checklist_source"] = gold_dec.items, "decomposed"
        else:
            extra["gold_checklist_source"] = "dataset"
        extra["gold_checklist"] = gold_checklist
        if not inferred:
            return self._counted("empty", CupidCounts(len(gold_checklist), 0, 0.0, 0.0), extra, "")
        inf_dec = await decompose(inferred, self.spec, complete)
        extra["decompose_raw"] = inf_dec.raw
        if not inf_dec.ok:
            return self._excluded(
                "decompose_failed", f"decomposing the inferred preference: {inf_dec.error}", inf_dec.raw, extra
            )
        extra["inferred_checklist"] = inf_dec.items
        infer_to_gt, gt_to_infer = await asyncio.gather(
            match(inf_dec.items, gold, self.spec, complete), match(gold_checklist, inferred, self.spec, complete)
        )
        raw = infer_to_gt.raw + "\n\n---\n\n" + gt_to_infer.raw
        if not (infer_to_gt.ok and gt_to_infer.ok):  # CUPID stores both lists empty, still counted
            extra["match_error"] = infer_to_gt.error or gt_to_infer.error
            counts = CupidCounts(len(gold_checklist), len(inf_dec.items), 0.0, 0.0)
            return self._counted("match_failed", counts, extra, raw)
        extra |= {
            "inferred_coverage": infer_to_gt.scores,
            "gold_coverage": gt_to_infer.scores,
            "inferred_labels": infer_to_gt.labels,
            "gold_labels": gt_to_infer.labels,
            "inferred_reasonings": infer_to_gt.reasonings,
            "gold_reasonings": gt_to_infer.reasonings,
        }
        counts = CupidCounts(len(gold_checklist), len(inf_dec.items), sum(gt_to_infer.scores), sum(infer_to_gt.scores))
        return self._counted("ok", counts, extra, raw)

    def context_length_cut(self, gold_checklist: list[str], instance: str = "") -> list[Judgment]:
        """The zero row CUPID writes when the inference hit the context window (counted)."""
        counts = CupidCounts(len(gold_checklist), 0, 0.0, 0.0)
        return self._counted("context_length", counts, {"instance": instance, "gold_checklist": gold_checklist}, "")

    def _counted(self, status: str, c: CupidCounts, extra: dict, raw: str) -> list[Judgment]:
        extra = extra | {
            "cupid_status": status,
            "n_true": c.n_true,
            "n_predicted": c.n_predicted,
            "true_matched": c.true_matched,
            "predicted_matched": c.predicted_matched,
        }
        prf = cupid_prf([c])
        why = {
            "precision": f"{c.predicted_matched:g} of {c.n_predicted} inferred items covered by the gold preference",
            "recall": f"{c.true_matched:g} of {c.n_true} gold items covered by the inferred preference",
            "f1": "harmonic mean of precision and recall",
        }
        if status != "ok":
            why = {d: f"{status} (counted as zero matches): {w}" for d, w in why.items()}
        return [
            Judgment(
                kind=self.kind,
                dimension=dim,
                score=value,
                rationale=why[dim],
                raw=raw,
                parse_ok=True,
                judge_model=self.spec.id,
                prompt_version=self.version,
                temperature=self.spec.params.temperature,
                scale_min=0.0,
                scale_max=1.0,
                extra=extra,
            )
            for dim, value in (("precision", prf.precision), ("recall", prf.recall), ("f1", prf.f1))
        ]

    def _excluded(self, status: str, reason: str, raw: str, extra: dict) -> list[Judgment]:
        return [
            Judgment(
                kind=self.kind,
                dimension=dim,
                score=None,
                rationale="",
                raw=raw,
                parse_ok=False,
                judge_model=self.spec.id,
                prompt_version=self.version,
                temperature=self.spec.params.temperature,
                scale_min=0.0,
                scale_max=1.0,
                error=f"excluded as CUPID does ({status}): {reason}",
                extra=extra | {"cupid_status": status},
            )
            for dim in ("precision", "recall", "f1")
        ]


def instance_counts(extra: dict) -> CupidCounts | None:
    """The four counts of one stored judgment's ``extra``; None when the instance is excluded.
    Judgments stored before the counts existed fall back to their coverage lists."""
    status = extra.get("cupid_status")
    if status in COUNTED:
        return CupidCounts(extra["n_true"], extra["n_predicted"], extra["true_matched"], extra["predicted_matched"])
    if status is None and "inferred_coverage" in extra and "gold_coverage" in extra:
        inf, gold = extra["inferred_coverage"], extra["gold_coverage"]
        return CupidCounts(len(gold), len(inf), float(sum(gold)), float(sum(inf)))
    return None


def micro_prf(extras: Iterable[dict]) -> PRF:
    """CUPID's micro-averaged P/R/F1 over the counted instances of stored ``precision`` judgments."""
    return cupid_prf([c for c in map(instance_counts, extras) if c is not None])


def status_counts(extras: Iterable[dict]) -> Counter[str]:
    """How many instances have each ``cupid_status`` (``unknown`` for judgments without one)."""
    return Counter(str(e.get("cupid_status", "unknown")) for e in extras)
