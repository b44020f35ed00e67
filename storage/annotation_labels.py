"""Labels by named annotators: saved from a queue item, or imported from a CSV made elsewhere.

Where each label is stored is in ``storage/migrations/m009_annotation.py``. A label and the record
that the annotator finished the item are one transaction, so a resumed session never serves a
labelled item again and never loses a label. Labelling an answer again adds a newer judgment; the
latest counts, as for any judge.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlite_utils import Database

from core.judges.base import Judgment
from storage.analyses import VERDICTS, human_judgment
from storage.annotation_queues import AnnotationError, Item
from storage.recorder import insert_judgment
from storage.transactions import transaction

#: The dimensions an answer is scored on in a queue: the RealPref rubric, 1–5.
ANSWER_DIMENSIONS = ("awareness", "alignment", "quality")
ANSWER_SCALE = (1.0, 5.0)
#: A pair verdict as shown -> score of the answer shown as A.
CHOICES = {"A": 1.0, "B": 0.0, "tie": 0.5}
_ANNOTATOR = re.compile(r"^[^\W_][\w.@-]{0,39}$")  # letters in any script; never ':' (judge ids have one)
IMPORT_COLUMNS = ("response_id", "annotator", "dimension", "score")


def check_annotator(name: str | None) -> str:
    """A usable annotator name (letters, digits, ``_ . @ -``; up to 40), else AnnotationError."""
    name = (name or "").strip()
    if not name:
        raise AnnotationError("name the annotator: --annotator NAME, or `annotator = NAME` in the config")
    if not _ANNOTATOR.match(name):
        raise AnnotationError(f"annotator {name!r}: use letters, digits and _ . @ - (up to 40 characters)")
    return name


@dataclass(frozen=True)
class Label:
    """What an annotator decided for one item; only the field of the item's kind is read."""

    scores: dict[str, float] = field(default_factory=dict)  # answer: dimension -> 1..5
    choice: str | None = None  # pair: "A" | "B" | "tie", as shown
    relevant: bool | None = None  # relevance
    verdict: str | None = None  # attribute: accept | uncertain | reject
    note: str = ""


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def save_label(db: Database, item: Item, annotator: str, label: Label, *, blind: bool) -> None:
    """Store the label and mark the item done for ``annotator``, in one transaction."""
    annotator = check_annotator(annotator)
    extra = {"queue": item.queue, "item": item.position, "blind": blind}
    with transaction(db):
        if item.kind == "answer":
            if not label.scores:
                raise AnnotationError("score at least one dimension (or skip the item)")
            for dim, score in label.scores.items():
                if dim not in ANSWER_DIMENSIONS:
                    raise AnnotationError(f"unknown dimension {dim!r}; choose from {', '.join(ANSWER_DIMENSIONS)}")
                j = human_judgment(annotator, "rubric", dim, score, ANSWER_SCALE, label.note, extra)
                insert_judgment(db, item.run_id, item.response_id, j)
        elif item.kind == "pair":
            if label.choice not in CHOICES:
                raise AnnotationError(f"a pair label is one of {', '.join(CHOICES)}, not {label.choice!r}")
            shown_a = CHOICES[label.choice]
            order = (
                [item.other_response_id, item.response_id]
                if item.swapped
                else [item.response_id, item.other_response_id]
            )
            pair = {
                "other_response": item.other_response_id,
                "shown_first": 2 if item.swapped else 1,
                "label": label.choice,
                "order": order,
            }
            score = 1.0 - shown_a if item.swapped else shown_a  # always answer 1's outcome
            j = human_judgment(annotator, "pairwise", "preferred", score, (0.0, 1.0), label.note, {**extra, **pair})
            insert_judgment(db, item.run_id, item.response_id, j)
        elif item.kind == "relevance":
            if label.relevant is None:
                raise AnnotationError("a relevance label is yes or no")
            db.execute(
                "DELETE FROM relevance WHERE run_id = ? AND target_kind = ? AND target_id = ? AND decider = 'human' "
                "AND coalesce(decider_model, '') = ?",
                [item.run_id, item.target_kind, item.target_id, annotator],
            )
            query_id = db.execute("SELECT query_id FROM runs WHERE id = ?", [item.run_id]).fetchone()[0]
            db.table("relevance").insert(
                {
                    "run_id": item.run_id,
                    "query_id": query_id,
                    "target_kind": item.target_kind,
                    "target_id": item.target_id,
                    "target_text": item.target_text,
                    "extraction_id": item.extraction_id,
                    "decider": "human",
                    "decider_model": annotator,
                    "relevant": int(label.relevant),
                    "reason": label.note,
                    "parse_ok": 1,
                    "extra": json.dumps(extra),
                    "created_at": _now(),
                }
            )
        else:
            if label.verdict not in VERDICTS:
                raise AnnotationError(f"an attribute label is one of {', '.join(VERDICTS)}, not {label.verdict!r}")
            db.table("attribute_labels").insert(
                {
                    "extraction_id": item.extraction_id,
                    "attribute_id": item.target_id,
                    "annotator": annotator,
                    "verdict": label.verdict,
                    "note": label.note,
                    "extra": json.dumps(extra),
                    "created_at": _now(),
                }
            )
        _mark_done(db, item, annotator, skipped=False)


def skip_item(db: Database, item: Item, annotator: str) -> None:
    """The annotator passes on this item: it is not served to them again and carries no label."""
    with transaction(db):
        _mark_done(db, item, check_annotator(annotator), skipped=True)


def _mark_done(db: Database, item: Item, annotator: str, *, skipped: bool) -> None:
    db.execute(
        "INSERT OR REPLACE INTO annotation_done (queue, position, annotator, skipped, created_at) VALUES (?, ?, ?, ?, ?)",
        [item.queue, item.position, annotator, int(skipped), _now()],
    )


# -- import ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportedLabels:
    stored: int
    annotators: tuple[str, ...]


def import_labels(db: Database, path: Path, *, max_rows: int = 1_000_000) -> ImportedLabels:
    """Labels from ``path`` (CSV: response_id, annotator, dimension, score[, note]); every row is
    checked first and nothing is stored unless all are valid (two rows giving one annotator's label
    of one answer and dimension different scores are invalid). A dimension is ``kind:dimension``
    (``alignment`` alone means the rubric's); the score must lie on the scale the judges use."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise AnnotationError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}, line {line})") from None
    try:
        with io.StringIO(text, newline="") as fh:
            reader = csv.DictReader(fh)
            header = [h.strip() for h in reader.fieldnames or []]
            missing = [c for c in IMPORT_COLUMNS if c not in header]
            if missing:
                raise AnnotationError(
                    f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(IMPORT_COLUMNS)}[, note]"
                )
            rows = []
            for n, row in enumerate(reader, start=2):
                if n - 1 > max_rows:
                    raise AnnotationError(f"{path}: more than {max_rows:,} rows")
                rows.append((n, {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}))
    except csv.Error as exc:
        raise AnnotationError(f"{path}: not a readable CSV ({exc})") from None
    errors: list[str] = []
    items: list[tuple[str, str, Judgment]] = []
    extra = {"imported_from": path.name, "blind": None}
    #: (response, annotator, kind, dimension) -> (line, score) of its first label in the file.
    first: dict[tuple[str, str, str, str], tuple[int, float | None]] = {}
    for n, row in rows:
        try:
            item = _imported(db, row, extra)
        except ValueError as exc:  # AnnotationError, or a score off the scale
            errors.append(f"line {n}: {exc}")
            continue
        items.append(item)
        _, response_id, j = item
        key = (response_id, j.extra["annotator"], j.kind, j.dimension)
        if key not in first:
            first[key] = (n, j.score)
        elif first[key][1] != j.score:
            line, score = first[key]
            errors.append(
                f"line {n}: {key[1]!r} labels {j.kind}:{j.dimension} of {response_id!r} {j.score:g}, "
                f"but line {line} labels it {score:g} (keep one)"
            )
    if errors:
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise AnnotationError(f"{path}: nothing imported; " + "; ".join(errors[:10]) + more)
    if not items:
        raise AnnotationError(f"{path}: no labels in the file")
    with transaction(db):
        for run_id, response_id, j in items:
            insert_judgment(db, run_id, response_id, j)
    return ImportedLabels(len(items), tuple(sorted({j.extra["annotator"] for _, _, j in items})))


def _imported(db: Database, row: dict[str, str], extra: dict) -> tuple[str, str, Judgment]:
    found = db.execute("SELECT run_id FROM responses WHERE id = ?", [row["response_id"]]).fetchone()
    if found is None:
        raise AnnotationError(f"no answer with response_id {row['response_id']!r}")
    annotator = check_annotator(row["annotator"])
    kind, _, dimension = row["dimension"].rpartition(":")
    kind = kind or "rubric"
    if not dimension:
        raise AnnotationError("empty dimension; write e.g. rubric:alignment")
    if kind == "pairwise":
        raise AnnotationError("pairwise verdicts need two answers; label them in a pair queue")
    try:
        score = float(row["score"])
    except ValueError:
        raise AnnotationError(f"score {row['score']!r} is not a number") from None
    scale = _scale(db, kind, dimension)
    if scale is None:
        raise AnnotationError(f"no judge has scored {kind}:{dimension}, so its scale is unknown")
    return (
        found[0],
        row["response_id"],
        human_judgment(annotator, kind, dimension, score, scale, row.get("note", ""), extra),
    )


def _scale(db: Database, kind: str, dimension: str) -> tuple[float, float] | None:
    if kind == "rubric" and dimension in ANSWER_DIMENSIONS:
        return ANSWER_SCALE
    row = db.execute(
        "SELECT scale_min, scale_max FROM judgments WHERE kind = ? AND dimension = ? AND scale_min IS NOT NULL "
        "AND human = 0 LIMIT 1",
        [kind, dimension],
    ).fetchone()
    return (row[0], row[1]) if row else None
