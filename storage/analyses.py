"""Repository for analyses: extracted attributes, relevance decisions, and human judgments.

- :func:`save_extraction` / :func:`load_extraction` / :func:`latest_extraction` / :func:`list_extractions`
- :func:`set_operator_verdict` – the operator accepts / marks uncertain / rejects an attribute
- :func:`save_relevance` / :func:`load_relevance` / :func:`save_human_relevance`
- :func:`save_human_judgment` – the operator's own score for a response, stored in ``judgments``
  with ``human = 1`` beside the LLM judges' scores
- :func:`load_judgments` – judgments with their ``extra`` (for pairwise / matching aggregates)

Each write is one transaction.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field

from sqlite_utils import Database

from core.analysis.attributes import Candidate, ChunkOutput, ExtractedAttribute, Extraction
from core.analysis.relevance import Decision
from core.judges.base import Judgment
from core.model import Attribute
from core.run.spec import new_id
from storage.ids import UnknownExtraction
from storage.recorder import insert_judgment
from storage.runs import StoredJudgment, select_judgments
from storage.transactions import transaction

VERDICTS = ("accept", "uncertain", "reject")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- attributes -----------------------------------------------------------------------------------


def save_extraction(
    db: Database, ex: Extraction, *, run_id: str | None = None, embedding_model: str | None = None
) -> str:
    extraction_id = new_id("attrx")
    with transaction(db):
        db.table("attribute_extractions").insert(
            {
                "id": extraction_id,
                "user_id": ex.user_id,
                "run_id": run_id,
                "model": ex.model,
                "prompt_version": ex.prompt_version,
                "temperature": ex.temperature,
                "chunk_chars": ex.chunk_chars,
                "min_confidence": ex.min_confidence,
                "threshold": ex.threshold,
                "embedding_model": embedding_model,
                "verifier_model": ex.verifier_model,
                "verifier_version": ex.verifier_version,
                "chunks": _dumps([dataclasses.asdict(c) for c in ex.chunks]),
                "dropped": _dumps([dataclasses.asdict(c) for c in ex.dropped]),
                "created_at": _now(),
            }
        )
        for pos, x in enumerate(ex.attributes):
            a = x.attribute
            db.table("attributes_extracted").insert(
                {
                    "extraction_id": extraction_id,
                    "id": a.id,
                    "position": pos,
                    "text": a.text,
                    "reasoning": a.reasoning,
                    "confidence": a.confidence,
                    "evidence_turns": _dumps(a.evidence_turns),
                    "source": a.source,
                    "merged_from": _dumps(x.merged_from),
                    "chunks": _dumps(x.chunks),
                    "verifier_verdict": x.verifier_verdict,
                    "verifier_reason": x.verifier_reason,
                    "verifier_raw": x.verifier_raw,
                    "verifier_error": x.verifier_error,
                }
            )
    return extraction_id


@dataclass
class StoredExtraction:
    id: str
    created_at: str
    extraction: Extraction
    operator: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # attribute id -> (verdict, note)


def load_extraction(db: Database, extraction_id: str) -> StoredExtraction:
    row = db.execute(
        "SELECT id, user_id, model, prompt_version, temperature, chunk_chars, min_confidence, threshold, "
        "verifier_model, verifier_version, chunks, dropped, created_at FROM attribute_extractions WHERE id = ?",
        [extraction_id],
    ).fetchone()
    if row is None:
        raise UnknownExtraction(extraction_id)
    attrs, operator = [], {}
    for r in db.execute(
        "SELECT id, text, reasoning, confidence, evidence_turns, source, merged_from, chunks, verifier_verdict, "
        "verifier_reason, verifier_raw, verifier_error, operator_verdict, operator_note "
        "FROM attributes_extracted WHERE extraction_id = ? ORDER BY position",
        [extraction_id],
    ):
        a = Attribute(id=r[0], text=r[1], reasoning=r[2], confidence=r[3], evidence_turns=json.loads(r[4]), source=r[5])
        attrs.append(ExtractedAttribute(a, json.loads(r[6]), json.loads(r[7]), r[8], r[9], r[10], r[11]))
        operator[r[0]] = (r[12], r[13])
    ex = Extraction(
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        attrs,
        [Candidate(**c) for c in json.loads(row[11])],
        [ChunkOutput(**c) for c in json.loads(row[10])],
        row[8],
        row[9],
    )
    return StoredExtraction(row[0], row[12], ex, operator)


def list_extractions(db: Database, user_id: str) -> list[tuple[str, str, str, int]]:
    """(id, created_at, model, number of attributes), newest first."""
    return [
        tuple(r)
        for r in db.execute(
            "SELECT e.id, e.created_at, e.model, (SELECT count(*) FROM attributes_extracted a WHERE a.extraction_id = e.id) "
            "FROM attribute_extractions e WHERE user_id = ? ORDER BY created_at DESC, id DESC",
            [user_id],
        )
    ]


def latest_extraction(db: Database, user_id: str) -> StoredExtraction | None:
    found = list_extractions(db, user_id)
    return load_extraction(db, found[0][0]) if found else None


def set_operator_verdict(
    db: Database, extraction_id: str, attribute_id: str, verdict: str | None, note: str = ""
) -> None:
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)} (or None to clear), not {verdict!r}")
    with transaction(db):
        cur = db.execute(
            "UPDATE attributes_extracted SET operator_verdict = ?, operator_note = ? "
            "WHERE extraction_id = ? AND id = ?",
            [verdict, note, extraction_id, attribute_id],
        )
        if cur.rowcount == 0:
            raise KeyError(f"extraction {extraction_id!r} has no attribute {attribute_id!r}")


# -- relevance ------------------------------------------------------------------------------------


def save_relevance(
    db: Database,
    run_id: str,
    query_id: str,
    decisions: list[Decision],
    *,
    texts: dict[tuple[str, str], str] | None = None,
    extraction_id: str | None = None,
    replace: bool = False,
) -> int:
    """Store decisions; ``replace`` first drops the run's earlier machine decisions (human labels stay)."""
    texts = texts or {}
    now = _now()
    with transaction(db):
        if replace:
            db.execute("DELETE FROM relevance WHERE run_id = ? AND decider != 'human'", [run_id])
        db.table("relevance").insert_all(
            [
                {
                    "run_id": run_id,
                    "query_id": query_id,
                    "target_kind": d.target_kind,
                    "target_id": d.target_id,
                    "target_text": texts.get((d.target_kind, d.target_id), ""),
                    "extraction_id": extraction_id if d.target_kind == "attribute" else None,
                    "decider": d.decider,
                    "decider_model": d.model,
                    "relevant": None if d.relevant is None else int(d.relevant),
                    "score": d.score,
                    "reason": d.reason,
                    "raw": d.raw,
                    "parse_ok": int(d.parse_ok),
                    "prompt_version": d.prompt_version,
                    "error": d.error,
                    "created_at": now,
                }
                for d in decisions
            ]
        )
    return len(decisions)


def save_human_relevance(
    db: Database,
    run_id: str,
    query_id: str,
    target_kind: str,
    target_id: str,
    relevant: bool,
    *,
    reason: str = "",
    annotator: str = "human",
) -> None:
    """The operator's label for one target; replaces their earlier label for it."""
    with transaction(db):
        db.execute(
            "DELETE FROM relevance WHERE run_id = ? AND target_kind = ? AND target_id = ? AND decider = 'human' "
            "AND coalesce(decider_model, '') = ?",
            [run_id, target_kind, target_id, annotator],
        )
        db.table("relevance").insert(
            {
                "run_id": run_id,
                "query_id": query_id,
                "target_kind": target_kind,
                "target_id": target_id,
                "decider": "human",
                "decider_model": annotator,
                "relevant": int(relevant),
                "score": None,
                "reason": reason,
                "parse_ok": 1,
                "created_at": _now(),
            }
        )


@dataclass
class StoredDecision:
    decision: Decision
    target_text: str
    extraction_id: str | None
    created_at: str


def load_relevance(db: Database, run_id: str) -> list[StoredDecision]:
    out = []
    for r in db.execute(
        "SELECT target_kind, target_id, decider, relevant, score, reason, decider_model, raw, parse_ok, "
        "prompt_version, error, target_text, extraction_id, created_at FROM relevance WHERE run_id = ? ORDER BY id",
        [run_id],
    ):
        d = Decision(
            r[0], r[1], r[2], None if r[3] is None else bool(r[3]), r[4], r[5], r[6], r[7], bool(r[8]), r[9], r[10]
        )
        out.append(StoredDecision(d, r[11], r[12], r[13]))
    return out


# -- human judgments ------------------------------------------------------------------------------


def human_judgment(
    annotator: str,
    kind: str,
    dimension: str,
    score: float,
    scale: tuple[float, float] | None,
    rationale: str = "",
    extra: dict | None = None,
) -> Judgment:
    """A human's score as a judgment beside the machine judges' (``human = 1``, ``judge_model =
    "human:<annotator>"``), on the scale of the judge it mirrors. A score outside ``scale`` is
    refused (ValueError) rather than stored."""
    if scale is not None and not (scale[0] <= score <= scale[1]):
        raise ValueError(f"score {score:g} is outside the {scale[0]:g}–{scale[1]:g} scale of {kind}:{dimension}")
    return Judgment(
        kind=kind,
        dimension=dimension,
        score=float(score),
        rationale=rationale,
        raw="",
        parse_ok=True,
        judge_model=f"human:{annotator}",
        prompt_version="human",
        temperature=None,
        scale_min=scale[0] if scale else None,
        scale_max=scale[1] if scale else None,
        human=True,
        extra={"annotator": annotator, **(extra or {})},
    )


def save_human_judgment(
    db: Database,
    run_id: str,
    response_id: str | None,
    *,
    kind: str,
    dimension: str,
    score: float,
    rationale: str = "",
    annotator: str = "operator",
    scale: tuple[float, float] | None = None,
    extra: dict | None = None,
) -> None:
    """The operator's own score for one answer (e.g. rubric/alignment 1–5), seen with everything
    on screen (not blind: ``extra.blind`` is false)."""
    j = human_judgment(annotator, kind, dimension, score, scale, rationale, {"blind": False, **(extra or {})})
    with transaction(db):
        insert_judgment(db, run_id, response_id, j)


def save_judgments(db: Database, run_id: str, items: list[tuple[str | None, Judgment]]) -> int:
    """Store (response id, judgment) pairs in one transaction (re-judging a stored run)."""
    with transaction(db):
        for response_id, j in items:
            insert_judgment(db, run_id, response_id, j)
    return len(items)


def load_judgments(db: Database, *, run_ids: list[str] | None = None, kind: str | None = None) -> list[StoredJudgment]:
    where, args = [], []
    if run_ids is not None:
        where.append(f"run_id IN ({', '.join('?' * len(run_ids))})")
        args += run_ids
    if kind is not None:
        where.append("kind = ?")
        args.append(kind)
    return select_judgments(db, " AND ".join(where), args)
