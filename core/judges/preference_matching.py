"""CUPID preference matching (seeds/003 §2.3, App. A.1): decompose the gold and the inferred
preference into atomic checklists, then label how far the OTHER preference covers each item
(Fully / Partially / Not covered = 1 / 0.5 / 0). Precision is over the inferred items, recall over
the gold items, F1 from both; :func:`core.metrics.checklist_prf` does the arithmetic, and
:func:`micro_prf` micro-averages stored judgments over instances as the paper does.

The matcher prompt is Figure 14 (verbatim); the decomposer (Figure 15, not printed) is ours.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input, numbered
from core.judges.parsing import canonical_label, first_json, get_key, json_objects
from core.judges.templates import template
from core.metrics import COVERAGE, PRF, checklist_prf
from core.providers.base import ModelSpec
from core.providers.calls import Complete, Completion

#: Methods whose final answer is an inferred preference (what this judge scores).
INFERENCE_METHODS = ("cupid-infer",)
LABELS = {
    "fully": ("fully covered", "fully", "full"),
    "partially": ("partially covered", "partially", "partial"),
    "not": ("not covered", "not", "none", "uncovered"),
}
SCALE = (0.0, 1.0)


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
class Coverage:
    values: list[float]
    raw: str
    version: str
    labels: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


async def decompose(preference: str, spec: ModelSpec, complete: Complete) -> Decomposition:
    t = template("cupid", "decompose")
    completion = await complete(spec, messages(t.fields["system"], t.text("user", preference=preference)))
    return parse_decomposition(completion, t.version)


def parse_decomposition(completion: Completion, version: str) -> Decomposition:
    if not completion.ok:
        return Decomposition([], completion.text, version, f"judge call failed: {completion.error}")
    obj = first_json(completion.text, "checklist")
    if obj is None:
        return Decomposition([], completion.text, version, "no JSON object with a 'checklist' list in the output")
    items = get_key(obj, "checklist")
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        return Decomposition([], completion.text, version, "'checklist' is not a list of non-empty strings")
    if not items:
        return Decomposition([], completion.text, version, "the checklist is empty")
    return Decomposition([i.strip() for i in items], completion.text, version)


async def match(checklist: list[str], preference: str, spec: ModelSpec, complete: Complete) -> Coverage:
    t = template("cupid", "match")
    user = t.text("user", preference=preference, checklist=numbered(checklist))
    completion = await complete(spec, messages(t.fields["system"], user))
    return parse_coverage(completion, len(checklist), t.version)


def parse_coverage(completion: Completion, n_items: int, version: str) -> Coverage:
    """Coverage of each checklist item, in checklist order. Indices may be 0- or 1-based; a
    missing, repeated or unknown label fails the whole match rather than guessing."""
    if not completion.ok:
        return Coverage([], completion.text, version, error=f"judge call failed: {completion.error}")
    results = None
    for obj, _, _ in json_objects(completion.text):
        r = get_key(obj, "results")
        if isinstance(r, list):
            results = r
            break
    if results is None:
        return Coverage([], completion.text, version, error="no JSON object with a 'results' list in the output")
    labels: list[str] = []
    indices: list[int | None] = []
    for k, entry in enumerate(results):
        if not isinstance(entry, dict):
            return Coverage([], completion.text, version, error=f"results[{k}] is not an object")
        label = canonical_label(get_key(entry, "label") or "", LABELS)
        if label is None:
            return Coverage(
                [],
                completion.text,
                version,
                error=f"results[{k}].label {get_key(entry, 'label')!r} is not Fully/Partially/Not Covered",
            )
        labels.append(label)
        idx = get_key(entry, "index")
        indices.append(int(idx) if isinstance(idx, (int, float)) or (isinstance(idx, str) and idx.isdigit()) else None)
    if len(labels) != n_items:
        return Coverage(
            [],
            completion.text,
            version,
            error=f"the matcher labelled {len(labels)} items but the checklist has {n_items}",
        )
    given = [i for i in indices if i is not None]
    if len(given) == len(indices):
        base = 0 if min(given, default=0) == 0 else 1
        order = [i - base for i in given]
        if sorted(order) != list(range(n_items)):
            return Coverage([], completion.text, version, error=f"result indices {indices} do not cover the checklist")
        labels = [lab for _, lab in sorted(zip(order, labels))]
    return Coverage([COVERAGE[lab] for lab in labels], completion.text, version, labels=labels)


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
        return await self.score(gold, list(item.query.checklist), item.response_text, complete)

    async def score(self, gold: str, gold_checklist: list[str], inferred: str, complete: Complete) -> list[Judgment]:
        """P/R/F1 of one inferred preference against the gold one (and its checklist, if known)."""
        if not inferred.strip():
            return self._fail("the inferred preference is empty")
        gold_task = (
            asyncio.sleep(0, Decomposition(gold_checklist, "", "dataset"))
            if gold_checklist
            else decompose(gold, self.spec, complete)
        )
        gold_dec, inf_dec = await asyncio.gather(gold_task, decompose(inferred, self.spec, complete))
        for label, dec in (("gold", gold_dec), ("inferred", inf_dec)):
            if not dec.ok:
                return self._fail(f"decomposing the {label} preference failed: {dec.error}")
        inf_cov, gold_cov = await asyncio.gather(
            match(inf_dec.items, gold, self.spec, complete), match(gold_dec.items, inferred, self.spec, complete)
        )
        extra: dict[str, object] = {
            "gold_checklist": gold_dec.items,
            "inferred_checklist": inf_dec.items,
            "gold_checklist_source": "dataset" if gold_checklist else "decomposed",
            "decompose_raw": {"gold": gold_dec.raw, "inferred": inf_dec.raw},
        }
        for label, cov in (("inferred items vs gold", inf_cov), ("gold items vs inferred", gold_cov)):
            if not cov.ok:
                return [
                    self._failed(
                        d,
                        f"matching {label} failed: {cov.error}",
                        inf_cov.raw if d == "precision" else gold_cov.raw,
                        extra,
                    )
                    for d in ("precision", "recall", "f1")
                ]
        extra |= {
            "inferred_coverage": inf_cov.values,
            "gold_coverage": gold_cov.values,
            "inferred_labels": inf_cov.labels,
            "gold_labels": gold_cov.labels,
        }
        prf = checklist_prf([(inf_cov.values, gold_cov.values)])
        raws = {"precision": inf_cov.raw, "recall": gold_cov.raw, "f1": inf_cov.raw + "\n\n---\n\n" + gold_cov.raw}
        out = []
        for dim, value in (("precision", prf.precision), ("recall", prf.recall), ("f1", prf.f1)):
            why = {
                "precision": f"{sum(inf_cov.values):g} of {len(inf_cov.values)} inferred items covered by the gold preference",
                "recall": f"{sum(gold_cov.values):g} of {len(gold_cov.values)} gold items covered by the inferred preference",
                "f1": "harmonic mean of precision and recall",
            }[dim]
            out.append(
                Judgment(
                    kind=self.kind,
                    dimension=dim,
                    score=value,
                    rationale=why,
                    raw=raws[dim],
                    parse_ok=True,
                    judge_model=self.spec.id,
                    prompt_version=self.version,
                    temperature=self.spec.params.temperature,
                    scale_min=0.0,
                    scale_max=1.0,
                    extra=extra,
                )
            )
        return out

    def _failed(self, dimension: str, reason: str, raw: str, extra: dict) -> Judgment:
        return Judgment(
            kind=self.kind,
            dimension=dimension,
            score=None,
            rationale="",
            raw=raw,
            parse_ok=False,
            judge_model=self.spec.id,
            prompt_version=self.version,
            temperature=self.spec.params.temperature,
            scale_min=0.0,
            scale_max=1.0,
            error=reason,
            extra=extra,
        )


def micro_prf(extras: Iterable[dict]) -> PRF:
    """Micro-averaged P/R/F1 over instances (CUPID) from the ``extra`` of stored ``precision``
    judgments (each holds both coverage lists). Instances without coverage are skipped."""
    instances = [
        (e["inferred_coverage"], e["gold_coverage"])
        for e in extras
        if "inferred_coverage" in e and "gold_coverage" in e
    ]
    return checklist_prf(instances)
