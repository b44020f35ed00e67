"""Answers produced elsewhere, stored as runs: one run (one final response) per imported answer.

An imported run is an ordinary run (``runs`` + ``prompts`` + ``responses`` rows) so it opens,
judges, compares, exports and reports like any other. What marks it:

* its model is ``imported:<source model>``, so ``responses.provider`` is ``imported`` wherever
  models are shown (runs list, results grid, export, report); no cost, tokens only where the file
  gives them, status ``error`` where it says the call failed; ``is_demo`` only
  for answers a ``demo:`` model wrote (an exported demo batch read back stays labelled demo);
* its RunSpec says how the answer was produced (method, context, inter turns) and its label is
  ``imported:<file>``; the plan's one step holds the messages when the source gave them, and its
  notes say what is known (source file, record, what the prompt was);
* its id is ``run-imported-<12 hex>``, a hash of the file's sha256, the record index and how
  the answer was produced (model, method, context, turns): importing the same file again finds
  every id stored and adds nothing.
* the same record twice in one file (every field equal but its position: the user and query, or
  texts, it matches, the model and how it was produced, the answer text, messages and meta) is a
  duplicate: skipped and counted (``keep_duplicates`` stores it as a run of its own).
* an answer naming a user that is not stored, with a fallback user of that very id, goes on the
  fallback as a placeholder (a LongMemEval hypothesis before its dataset): importing the dataset
  later replaces the placeholder user and the run, which survives a user's re-import, links itself.
* an answer with recorded scores that another file of the same format already stored (same user,
  query, model, method, context and answer text: a judge's log of a hypothesis file) adds its
  recorded scores to that run instead of storing the answer twice (once per judge and file).

:func:`save_imported` resolves every answer first (stored ids, text match, or the answer's own
fallback user) and raises :class:`ImportedAnswerError` naming file, record and field before
writing; then writes everything in ONE transaction.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field

from sqlite_utils import Database

from core.formats.errors import FormatError
from core.judges.aggregate import RECORDED_PREFIX
from core.plan import Message, PromptPlan, PromptStep
from core.providers.base import ModelSpec
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport
from core.run.spec import RunSpec
from storage.prompt_messages import insert_prompt_step
from storage.transactions import transaction
from storage.users import ImportSummary, _insert_bundle

PROVIDER = "imported"
STEP = "imported"


class ImportedAnswerError(FormatError):
    """An answer that cannot be linked to a stored user and query; nothing was stored."""


@dataclass
class ImportedRunsSummary:
    format: str
    runs_added: list[str] = field(default_factory=list)
    #: Answers whose run was already stored (same file, same record): not written again.
    runs_existing: int = 0
    #: Answers linked to a stored user by their texts (PrefEval) or ids (generic).
    matched: int = 0
    #: Answers stored on a user of their own (no stored user matched).
    unmatched: int = 0
    users_added: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: (file, record label, label of the first record it repeats), in file order.
    duplicates: list[tuple[str, str, str]] = field(default_factory=list)
    #: Whether the duplicates were stored (``keep_duplicates``) rather than skipped.
    duplicates_kept: bool = False
    #: Runs stored before (from another file) that received this file's recorded scores.
    recorded_attached: list[str] = field(default_factory=list)
    #: Answers stored on placeholder users named by their own ids (their dataset is not imported).
    placeholders: int = 0


def imported_run_id(answer: ImportedAnswer) -> str:
    # The file's bytes and the record, plus what its path says (PrefEval: model, method and turns
    # live in the file and folder names), so identical files under two names stay two runs.
    a = answer
    key = f"{a.format}:{a.source_sha256}:{a.record}:{a.model}:{a.method}:{a.context}:{a.turns}"
    return f"run-imported-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def model_id(answer: ImportedAnswer) -> str:
    return f"{PROVIDER}:{answer.model}"


#: What an answer's position in its file leaves out (the notes and fallback user derive from it).
_POSITIONAL = {"record", "record_label", "prompt_notes", "fallback", "fallback_query_id"}


def duplicate_key(answer: ImportedAnswer) -> str:
    """Two answers of one file with the same key are the same record given twice."""
    return answer.model_dump_json(exclude=_POSITIONAL)


def save_imported(db: Database, result: ResultsImport, *, keep_duplicates: bool = False) -> ImportedRunsSummary:
    """Link every answer to a user and query, then store the new runs in one transaction. A record
    repeating an earlier one of the same file is listed in ``duplicates`` and skipped, unless
    ``keep_duplicates``."""
    summary = ImportedRunsSummary(format=result.format, notes=list(result.notes), duplicates_kept=keep_duplicates)
    first_of: dict[str, str] = {}
    by_text = _texts_index(db)
    stored = {r[0] for r in db.execute("SELECT id FROM runs WHERE id LIKE 'run-imported-%'")}
    fallbacks: dict = {}
    todo: list[tuple[str, ImportedAnswer, str, str]] = []
    attach: list[tuple[str, ImportedAnswer]] = []
    seen: set[str] = set()
    for a in result.answers:
        key = duplicate_key(a)
        if key in first_of:
            summary.duplicates.append((a.source_file, a.record_label, first_of[key]))
            if not keep_duplicates:
                continue
        else:
            first_of[key] = a.record_label
        run_id = imported_run_id(a)
        if run_id in stored or run_id in seen:
            summary.runs_existing += 1
            continue
        seen.add(run_id)
        user_id, query_id = _link(db, a, by_text)
        if user_id is None:
            assert a.fallback is not None and a.fallback_query_id is not None
            user_id, query_id = a.fallback.user.id, a.fallback_query_id
            fallbacks.setdefault(user_id, a.fallback)
            summary.unmatched += 1
            summary.placeholders += a.user_id == user_id
        else:
            summary.matched += 1
        assert query_id is not None
        if a.recorded and (earlier := _same_answer(db, a, user_id, query_id)) is not None:
            if missing := _recorded_missing(db, earlier, a):
                attach.append((earlier, a.model_copy(update={"recorded": missing})))
            else:
                summary.runs_existing += 1
            continue
        todo.append((run_id, a, user_id, query_id))
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    new_users = [u for u in fallbacks if not _exists(db, "SELECT 1 FROM users WHERE id = ?", [u])]
    with transaction(db):
        for uid in new_users:
            _insert_bundle(db, fallbacks[uid], f"{result.format}-results", now, ImportSummary(format=result.format))
        for run_id, a, user_id, query_id in todo:
            _insert_run(db, run_id, a, user_id, query_id, now)
        for run_id, a in attach:
            _insert_recorded(db, run_id, run_id.replace("run-", "resp-", 1), a, now)
    summary.users_added = new_users
    summary.runs_added = [t[0] for t in todo]
    summary.recorded_attached = [r for r, _ in attach]
    if attach:
        judges = sorted({f"{RECORDED_PREFIX}{r.judge}" for _, a in attach for r in a.recorded})
        summary.notes.append(
            f"{len(attach)} answer{'s' * (len(attach) != 1)} of this file were stored before from another file:"
            f" their recorded scores ({', '.join(judges)}) were added to those runs"
        )
    if summary.placeholders:
        n = summary.placeholders
        summary.notes.append(
            f"{n} answer{'s' * (n != 1)} name questions not stored: kept on placeholder questions of those ids;"
            " importing their dataset later links them"
        )
    return summary


def _same_answer(db: Database, a: ImportedAnswer, user_id: str, query_id: str) -> str | None:
    """The imported run of another file of the same format holding this very answer, if any."""
    row = db.execute(
        "SELECT r.id FROM runs r JOIN responses p ON p.run_id = r.id AND p.is_final = 1 "
        "WHERE r.id LIKE 'run-imported-%' AND r.user_id = ? AND r.query_id = ? AND r.method = ? AND r.context = ? "
        "AND p.model = ? AND p.text = ? AND json_extract(r.plan, '$.imported.format') = ? "
        "AND json_extract(r.plan, '$.imported.file') != ? ORDER BY r.created_at, r.id LIMIT 1",
        [user_id, query_id, a.method, a.context, model_id(a), a.answer, a.format, a.source_file],
    ).fetchone()
    return row[0] if row else None


def _recorded_missing(db: Database, run_id: str, a: ImportedAnswer) -> list[RecordedScore]:
    """The recorded scores of ``a`` that ``run_id`` does not hold yet (per judge, kind, dimension and file)."""
    sql = (
        "SELECT 1 FROM judgments WHERE run_id = ? AND kind = ? AND dimension = ? AND judge_model = ? "
        "AND json_extract(extra, '$.file') = ?"
    )
    return [
        r
        for r in a.recorded
        if not _exists(db, sql, [run_id, r.kind, r.dimension, f"{RECORDED_PREFIX}{r.judge}", a.source_file])
    ]


def _texts_index(db: Database) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    """(preference text, question, query kind) -> stored (user, query) pairs, for PrefEval matching."""
    out: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for uid, qid, pref, question, kind in db.execute(
        "SELECT q.user_id, q.id, pr.text, q.text, q.kind FROM queries q "
        "JOIN preferences pr ON pr.user_id = q.user_id AND pr.id = q.preference_id "
        "WHERE q.kind IN ('open', 'mcq') ORDER BY q.user_id, q.position"
    ):
        out.setdefault((pref, question, kind), []).append((uid, qid))
    return out


def _link(db: Database, a: ImportedAnswer, by_text: dict) -> tuple[str | None, str | None]:
    if a.user_id is not None or a.query_id is not None:
        placeholder = a.fallback is not None and a.fallback.user.id == a.user_id
        if placeholder and not _exists(db, "SELECT 1 FROM users WHERE id = ?", [a.user_id]):
            return None, None  # a placeholder of the ids the answer names, until its dataset is imported
        if not _exists(db, "SELECT 1 FROM users WHERE id = ?", [a.user_id]):
            raise _error(a, "user", f"no stored user {a.user_id!r} (import the users first; see `prefscope users`)")
        if not _exists(db, "SELECT 1 FROM queries WHERE user_id = ? AND id = ?", [a.user_id, a.query_id]):
            raise _error(a, "query", f"user {a.user_id!r} has no query {a.query_id!r} (see `prefscope show`)")
        return a.user_id, a.query_id
    if a.match_meta is not None:
        return _by_meta(db, a)
    if a.match is not None:
        # "kind" (default open): an MCQ answer goes on the MCQ query of the same texts
        key = (a.match.get("preference", ""), a.match.get("question", ""), a.match.get("kind", "open"))
        found = by_text.get(key, [])
        if found:
            # Repeated texts: prefer the stored user of the same record index (PrefEval's own ids).
            same = [f for f in found if f[0].endswith(f"-{a.record:03d}")]
            return (same or found)[0]
    if a.fallback is None:
        raise _error(a, "match", "no stored user has this preference and question, and the format gives no fallback")
    return None, None


_META_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _by_meta(db: Database, a: ImportedAnswer) -> tuple[str, str]:
    """The one stored query whose meta holds every value of ``a.match_meta`` (PersonaMem ids)."""
    assert a.match_meta is not None
    keys = [k for k in a.match_meta if _META_KEY.match(k)]
    if len(keys) != len(a.match_meta):
        raise _error(a, "match", f"not a meta key: {sorted(set(a.match_meta) - set(keys))}")
    where = " AND ".join(f"CAST(json_extract(meta, '$.{k}') AS TEXT) = ?" for k in keys)
    found = db.execute(
        f"SELECT user_id, id FROM queries WHERE {where} ORDER BY user_id", [a.match_meta[k] for k in keys]
    ).fetchall()
    said = ", ".join(f"{k} {v!r}" for k, v in a.match_meta.items())
    if not found:
        raise _error(a, "match", f"no stored question has {said} (import the {a.format} dataset first)")
    if len(found) > 1:
        users = ", ".join(u for u, _ in found[:4])
        raise _error(
            a, "match", f"{len(found)} stored questions have {said} (users {users}): name the size in the file name"
        )
    return found[0][0], found[0][1]


def _error(a: ImportedAnswer, path: str, message: str) -> ImportedAnswerError:
    return ImportedAnswerError(a.source_file, f"{message}; nothing was stored", record=a.record_label, path=path)


def _exists(db: Database, sql: str, args: list) -> bool:
    return db.execute(sql, args).fetchone() is not None


def imported_plan(a: ImportedAnswer) -> PromptPlan:
    messages = a.messages or [Message(role="user", content=a.query_text or "(question not given by the source)")]
    purpose = "the messages the source gave" if a.messages else "the question only: the source has no messages"
    return PromptPlan(
        method=a.method,
        answer_format=a.answer_format or "open",
        steps=[PromptStep(name=STEP, messages=messages, purpose=f"recorded answer ({purpose})")],
        notes=list(a.prompt_notes),
    )


def imported_spec(a: ImportedAnswer, user_id: str, query_id: str) -> RunSpec:
    return RunSpec(
        user_id=user_id,
        query_id=query_id,
        expression_type=a.expression_type,
        context=a.context,
        turns=a.turns,
        method=a.method,
        method_options=a.method_options,
        models=[ModelSpec(id=model_id(a))],
        label=f"{PROVIDER}:{a.source_file}",
    )


def _insert_run(db: Database, run_id: str, a: ImportedAnswer, user_id: str, query_id: str, now: str) -> None:
    spec = imported_spec(a, user_id, query_id)
    plan = imported_plan(a)
    source = {
        "format": a.format,
        "file": a.source_file,
        "sha256": a.source_sha256,
        "record": a.record,
        "meta": a.meta,
    }
    plan_meta = {**plan.model_dump(mode="json", exclude={"steps"}), "imported": source}
    db.table("runs").insert(
        {
            "id": run_id,
            "created_at": now,
            "finished_at": now,
            "user_id": user_id,
            "query_id": query_id,
            "expression_type": spec.expression_type,
            "context": spec.context,
            "seed": spec.seed,
            "method": spec.method,
            "label": spec.label,
            "spec": spec.model_dump_json(),
            "plan": json.dumps(plan_meta, ensure_ascii=False),
            "status": "error" if a.error else "ok",
            "pid": None,
        }
    )
    step = plan.steps[0]
    sha = insert_prompt_step(db, run_id, 0, step)  # also the response's request hash, as before
    model = spec.models[0]
    db.table("responses").insert(
        {
            "id": run_id.replace("run-", "resp-", 1),
            "run_id": run_id,
            "slot": 0,
            "model": model.id,
            "provider": PROVIDER,
            "is_demo": int(model.model.startswith("demo:")),  # imported:demo:oracle
            "params": model.params.model_dump_json(),
            "base_url": None,
            "step": step.name,
            "is_final": 1,
            "request_hash": sha,
            "text": a.answer,
            "status": "error" if a.error else "ok",
            "error": a.error,
            "input_tokens": a.input_tokens,
            "output_tokens": a.output_tokens,
            "cache_hit": 0,
            "started_at": now,
            "updated_at": now,
        }
    )
    _insert_recorded(db, run_id, run_id.replace("run-", "resp-", 1), a, now)


def _insert_recorded(db: Database, run_id: str, response_id: str, a: ImportedAnswer, now: str) -> None:
    """The scores the file recorded for the answer, as judgments of ``recorded:<judge>``: their own
    source (``core.judges.aggregate.source_of``), never pooled with judgments prefscope makes."""
    for r in a.recorded:
        db.table("judgments").insert(
            {
                "run_id": run_id,
                "response_id": response_id,
                "kind": r.kind,
                "dimension": r.dimension,
                "score": r.score,
                "scale_min": r.scale_min,
                "scale_max": r.scale_max,
                "rationale": r.rationale,
                "raw": r.raw,
                "parse_ok": int(r.score is not None),
                "judge_model": f"{RECORDED_PREFIX}{r.judge}",
                "prompt_version": "recorded",
                "error": None if r.score is not None else f"the file recorded no usable score ({r.raw!r})",
                "extra": json.dumps({"recorded": True, "file": a.source_file, **r.meta}, ensure_ascii=False),
                "created_at": now,
            }
        )
