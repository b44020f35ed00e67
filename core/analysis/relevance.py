"""Re-Centering stage 2 (Re-Centering paper §5): which attributes – and which retrieved history turns –
matter for this query? Several deciders answer side by side:

- ``llm``       a judge model, one call per target, yes/no with a reason (``recentering-relevance-v1``
                for attributes, ``recentering-turn-relevance-v1`` for turns; prompts ours). The
                criterion: relevant iff a good answer would be different because of it.
- ``bm25``      rank-bm25 over the targets with the query as the search; relevant when the score
                is > 0 and at least ``bm25_ratio`` (default 0.5) of the best target's score.
- ``embedding`` cosine similarity from an injected ``embed`` callable; relevant at ≥
                ``embedding_threshold`` (default 0.4). Both thresholds are prefscope's choice; the
                paper reports F1 for BM25 (0.243) and embeddings (0.384) against human labels.
- ``gold``      from the dataset, when it has it: an attribute is relevant when one of its
                evidence turns lies in a gold evidence session of the query; a retrieved turn when
                its session is gold evidence (``is_evidence``).
- ``human``     the operator's labels (stored by ``storage.analyses``).

:func:`agreement` compares every decider with a reference (gold or human) by Cohen's kappa and
binary P/R/F1 (``core.metrics``), plus each decider's positive rate (the paper: LLMs mark 40–60%
relevant where humans mark ~20%).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.judges.common import judge_spec, messages
from core.judges.parsing import parse_label
from core.judges.templates import template
from core.model import Attribute, Query, UserBundle, split_turn_ref, turn_ref
from core.plan import RetrievedTurn
from core.providers.calls import Complete
from core.text.words import terms

if TYPE_CHECKING:  # numpy and the metrics are imported where scores are computed: the workbench
    import numpy as np  # reads stored decisions (this module's types) at start-up without them

DECIDERS = ("llm", "bm25", "embedding", "gold", "human")
YES_NO = {"yes": ("y", "true", "relevant"), "no": ("n", "false", "not relevant", "irrelevant")}
DEFAULT_BM25_RATIO = 0.5
DEFAULT_EMBEDDING_THRESHOLD = 0.4


@dataclass(frozen=True)
class Target:
    kind: str  # "attribute" | "turn"
    id: str
    text: str
    gold: bool | None = None


@dataclass(frozen=True)
class Decision:
    target_kind: str
    target_id: str
    decider: str
    relevant: bool | None  # None: the decider could not decide (parse failure), recorded as such
    score: float | None = None
    reason: str = ""
    model: str | None = None
    raw: str = ""
    parse_ok: bool = True
    prompt_version: str = ""
    error: str | None = None


def attribute_targets(
    bundle: UserBundle, query: Query, expression_type: int | None, attributes: Iterable[Attribute]
) -> list[Target]:
    gold_sessions = set(bundle.gold_evidence(query, expression_type))
    out = []
    for a in attributes:
        gold = None
        if gold_sessions:
            gold = any(split_turn_ref(ref)[0] in gold_sessions for ref in a.evidence_turns)
        out.append(Target("attribute", a.id, a.text, gold))
    return out


def turn_targets(retrieved: Iterable[RetrievedTurn]) -> list[Target]:
    return [Target("turn", turn_ref(r.session_id, r.turn_index), r.text, r.is_evidence) for r in retrieved]


def gold_decisions(targets: Sequence[Target]) -> list[Decision]:
    return [
        Decision(
            t.kind,
            t.id,
            "gold",
            t.gold,
            None,
            "an evidence turn lies in a gold evidence session"
            if t.gold and t.kind == "attribute"
            else "session is gold evidence"
            if t.gold
            else "not in the gold evidence",
        )
        for t in targets
        if t.gold is not None
    ]


def bm25_decisions(query: str, targets: Sequence[Target], ratio: float = DEFAULT_BM25_RATIO) -> list[Decision]:
    if not targets:
        return []
    from rank_bm25 import BM25Okapi

    corpus = [terms(t.text) or ["\u2205"] for t in targets]
    import numpy as np

    scores = np.asarray(BM25Okapi(corpus).get_scores(terms(query)), dtype=float)
    best = float(scores.max()) if len(scores) else 0.0
    out = []
    for t, s in zip(targets, scores):
        relevant = bool(best > 0 and s > 0 and s >= ratio * best)
        out.append(
            Decision(
                t.kind,
                t.id,
                "bm25",
                relevant,
                round(float(s), 6),
                f"score {s:.3f} vs best {best:.3f} (relevant at ≥ {ratio:g}× best)",
            )
        )
    return out


def embedding_decisions(
    query: str,
    targets: Sequence[Target],
    embed: Callable[[list[str]], np.ndarray],
    threshold: float = DEFAULT_EMBEDDING_THRESHOLD,
    model: str | None = None,
) -> list[Decision]:
    """``model``: the embedder id, stored with each decision."""
    if not targets:
        return []
    import numpy as np

    vecs = np.asarray(embed([query] + [t.text for t in targets]), dtype=float)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    sims = vecs[1:] @ vecs[0]
    return [
        Decision(
            t.kind,
            t.id,
            "embedding",
            bool(s >= threshold),
            round(float(s), 6),
            f"cosine {s:.3f} (relevant at ≥ {threshold:g})",
            model=model,
        )
        for t, s in zip(targets, sims)
    ]


async def llm_decisions(
    query: str, targets: Sequence[Target], model_id: str, complete: Complete, *, temperature: float | None = 0.0
) -> list[Decision]:
    spec = judge_spec(model_id, temperature)

    async def one(t: Target) -> Decision:
        tpl = template("recentering", "relevance" if t.kind == "attribute" else "turn_relevance")
        field = {"attribute": t.text} if t.kind == "attribute" else {"passage": t.text}
        completion = await complete(spec, messages(tpl.fields["system"], tpl.text("user", query=query, **field)))
        if not completion.ok:
            return Decision(
                t.kind,
                t.id,
                "llm",
                None,
                None,
                "",
                model_id,
                completion.text,
                False,
                tpl.version,
                f"judge call failed: {completion.error}",
            )
        parsed = parse_label(completion.text, YES_NO, key=("relevant", "answer"))
        if not parsed.ok:
            return Decision(
                t.kind,
                t.id,
                "llm",
                None,
                None,
                parsed.rationale,
                model_id,
                completion.text,
                False,
                tpl.version,
                parsed.error,
            )
        yes = parsed.value == "yes"
        return Decision(
            t.kind,
            t.id,
            "llm",
            yes,
            1.0 if yes else 0.0,
            parsed.rationale,
            model_id,
            completion.text,
            True,
            tpl.version,
        )

    return list(await asyncio.gather(*(one(t) for t in targets)))


# -- comparing deciders ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DeciderAgreement:
    decider: str
    reference: str
    n: int
    positive_rate: float | None
    kappa: float | None
    precision: float | None
    recall: float | None
    f1: float | None


def side_by_side(decisions: Iterable[Decision]) -> dict[tuple[str, str], dict[str, Decision]]:
    """(target kind, target id) -> decider -> decision (the last one wins per decider)."""
    table: dict[tuple[str, str], dict[str, Decision]] = {}
    for d in decisions:
        table.setdefault((d.target_kind, d.target_id), {})[d.decider] = d
    return table


def agreement(decisions: Iterable[Decision], reference: str = "gold") -> list[DeciderAgreement]:
    """Every other decider against ``reference`` on the targets both decided."""
    from core.metrics import binary_prf, cohen_kappa

    table = side_by_side(decisions)
    deciders = sorted(
        {dec for row in table.values() for dec in row} - {reference},
        key=lambda d: DECIDERS.index(d) if d in DECIDERS else len(DECIDERS),
    )
    out = []
    for dec in deciders:
        pairs = [
            (row[dec].relevant, row[reference].relevant)
            for row in table.values()
            if dec in row and reference in row and row[dec].relevant is not None and row[reference].relevant is not None
        ]
        decided = [bool(row[dec].relevant) for row in table.values() if dec in row and row[dec].relevant is not None]
        rate = sum(decided) / len(decided) if decided else None
        if not pairs:
            out.append(DeciderAgreement(dec, reference, 0, rate, None, None, None, None))
            continue
        pred = [bool(p) for p, _ in pairs]
        gold = [bool(g) for _, g in pairs]
        prf = binary_prf(pred, gold)
        out.append(
            DeciderAgreement(
                dec, reference, len(pairs), rate, cohen_kappa(pred, gold), prf.precision, prf.recall, prf.f1
            )
        )
    return out
