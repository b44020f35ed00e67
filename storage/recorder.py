"""The run recorder: persists engine events through the single writer, and never loses a token
for longer than a checkpoint interval.

``record(event)`` is called on the engine's event loop and must stay cheap: token text goes into
an in-memory buffer; a ticker thread submits a checkpoint of every response whose text changed
at most every ``CHECKPOINT_S`` seconds, so a crash (even ``kill -9``) loses at most that much of
any partial answer. Everything else becomes one write job on the writer thread.

Until a run's last write has its outcome, the recorder keeps what it needs to save the run's
answers elsewhere: a finished answer whose write failed (a disk that filled up after the write
check, a lock held past the deadline) goes to the recovery file beside the database
(:mod:`storage.recovery`), which ``prefscope import-results`` reads back, and the error raised by
``flush``/``close`` names that file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sqlite_utils import Database

from core.judges.base import Judgment
from core.providers.redact import ANSWER_MASK, answer_redactor, redact
from core.run.spec import (
    JudgeScored,
    ResponseFinished,
    ResponseStarted,
    RunEvent,
    RunFinished,
    RunStarted,
    TokensArrived,
)
from storage.prompt_messages import STEP_LIMITS, insert_prompt_step, step_limits
from storage.recovery import RecoveryFile, answer_record
from storage.writable import reason
from storage.writer import WRITE_DEADLINE_S, Writer, WriterError

if TYPE_CHECKING:
    from storage.page_check import PageCheck

CHECKPOINT_S = 0.25


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class AnswersNotStored(WriterError):
    """Writes of runs failed; the message says why in the operator's terms, how many answers were
    lost and where they were saved instead (``recovery``)."""

    def __init__(self, errors: list[BaseException], message: str, recovery: RecoveryFile):
        super().__init__(errors, message)
        self.recovery = recovery


@dataclass
class _Journal:
    """What a run's answers need to be saved elsewhere, kept until its last write has an outcome."""

    started: RunStarted
    responses: dict[str, ResponseStarted] = field(default_factory=dict)
    #: response id -> its final event and the future of the write storing it.
    finished: dict[str, tuple[ResponseFinished, Future]] = field(default_factory=dict)
    scores: dict[str, list[Judgment]] = field(default_factory=dict)


class RunRecorder:
    def __init__(
        self,
        db_path: str | Path,
        *,
        checkpoint_s: float = CHECKPOINT_S,
        write_deadline_s: float = WRITE_DEADLINE_S,
        after: PageCheck | None = None,
    ):
        """``after``: a page check still running; no write happens before it passes."""
        self.writer = Writer(db_path, deadline_s=write_deadline_s, after=after)
        self.db_path = Path(db_path)
        self.recovery = RecoveryFile(db_path)
        self._journals: dict[str, _Journal] = {}
        #: Answers saved to the recovery file (or not) that no raised error has reported yet.
        self._told = (0, 0)
        self.checkpoint_s = checkpoint_s
        self._lock = threading.Lock()
        self._text: dict[str, list[str]] = {}
        self._dirty: set[str] = set()
        #: run id -> the first failed write of that run; ``errors`` are raised once by ``flush``.
        self.unstored: dict[str, str] = {}
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="prefscope-checkpoint", daemon=True)
        self._ticker.start()

    # -- events (engine loop thread) -------------------------------------------------------
    def record(self, event: RunEvent) -> None:
        if isinstance(event, TokensArrived):
            with self._lock:
                self._text.setdefault(event.response_id, []).append(event.text)
                self._dirty.add(event.response_id)
            return
        if isinstance(event, RunStarted):
            with self._lock:
                self._journals[event.run_id] = _Journal(event)
            self._write(event.run_id, lambda db: insert_run(db, event))
        elif isinstance(event, ResponseStarted):
            with self._lock:
                self._text[event.response_id] = []
                if (journal := self._journals.get(event.run_id)) is not None:
                    journal.responses[event.response_id] = event
            self._write(event.run_id, lambda db: insert_response(db, event))
        elif isinstance(event, ResponseFinished):
            with self._lock:
                self._text.pop(event.response_id, None)
                self._dirty.discard(event.response_id)
            stored = self._write(event.run_id, lambda db: finish_response(db, event))
            with self._lock:
                if (journal := self._journals.get(event.run_id)) is not None:
                    journal.finished[event.response_id] = (event, stored)
        elif isinstance(event, JudgeScored):
            # JudgeScored types its judgment as object; once it says Judgment, warn_redundant_casts flags this cast.
            judgment = cast(Judgment, event.judgment)
            with self._lock:
                if (journal := self._journals.get(event.run_id)) is not None and event.response_id is not None:
                    journal.scores.setdefault(event.response_id, []).append(judgment)
            self._write(event.run_id, lambda db: insert_judgment(db, event.run_id, event.response_id, judgment))
        elif isinstance(event, RunFinished):

            def finish_run(db: Database) -> None:
                # A run some of whose writes failed is not 'ok' in the database: it is re-run or
                # settled on resume, like a run cut off by a crash (the writer tells failures first).
                status = event.status if self.lost(event.run_id) is None else "interrupted"
                db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, _now(), event.run_id))

            last = self._write(event.run_id, finish_run)
            # The run's earlier writes were applied before this one: every outcome is known then.
            last.add_done_callback(lambda _: self._settle(event.run_id))

    def _write(self, run_id: str, job: Callable[[Database], object]) -> Future:
        """Post a run's write, remembering the run if it fails, so nobody reports it as stored.

        A failure inside the transaction is noted at once (a later job of the same batch, such as
        a batch cell's status, sees it); a refused BEGIN/COMMIT when the batch's futures resolve.
        """

        def tracked(db: Database) -> object:
            try:
                return job(db)
            except BaseException as exc:
                self._lost(run_id, exc)
                raise

        def refused(f: Future) -> None:
            if f.exception() is not None:
                self._lost(run_id, f.exception())

        future = self.writer.submit(tracked)
        future.add_done_callback(refused)
        return future

    def _settle(self, run_id: str) -> None:
        """The run's writes have their outcomes: save its finished answers that were not stored to
        the recovery file, and forget the run."""
        with self._lock:
            journal = self._journals.pop(run_id, None)
            why = self.unstored.get(run_id)
        if journal is None or why is None:
            return
        self.recovery.append(lost_answers(journal, why))

    def _lost(self, run_id: str, exc: BaseException | None) -> None:
        with self._lock:
            if run_id not in self.unstored:
                self.unstored[run_id] = reason(exc) if exc is not None else "the write failed"
                self.errors.append(exc or RuntimeError("write failed"))

    def lost(self, run_id: str) -> str | None:
        """Why a write of this run failed (it is then not completely stored), or None."""
        with self._lock:
            return self.unstored.get(run_id)

    __call__ = record

    # -- checkpoints (ticker thread) -------------------------------------------------------
    def _tick(self) -> None:
        while not self._stop.wait(self.checkpoint_s):
            self.checkpoint()

    def checkpoint(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            snapshot = {rid: "".join(self._text.get(rid, [])) for rid in self._dirty}
            self._dirty.clear()
        now = _now()

        mask = answer_redactor()

        def job(db: Database) -> None:
            db.conn.executemany(
                "UPDATE responses SET text = ?, updated_at = ? WHERE id = ? AND status = 'running'",
                [(mask(text), now, rid) for rid, text in snapshot.items()],
            )

        self.writer.post(job)

    def flush(self) -> None:
        """Wait for every write; raise :class:`AnswersNotStored` (once) for the writes that failed."""
        self.checkpoint()
        try:
            self.writer.flush()
        except WriterError as exc:  # a partial text's checkpoint: its answer's own write says more
            with self._lock:
                self.errors.extend(exc.errors)
        self._raise_errors()

    def _raise_errors(self) -> None:
        with self._lock:
            errors, self.errors = self.errors, []
        if errors:
            raise AnswersNotStored(errors, self._message(errors), self.recovery)

    def _message(self, errors: list[BaseException]) -> str:
        """One line: why writes failed, how many answers were lost and where they were saved."""
        saved, unsaved = self.recovery.saved, self.recovery.unsaved
        new = (saved - self._told[0], unsaved - self._told[1])
        self._told = (saved, unsaved)
        lost = new[0] + new[1]
        what = f"{lost} answer{'s' * (lost != 1)}" if lost else "some writes (a run's status, scores or partial text)"
        line = f"{what} could not be stored in {self.db_path}: {reason(errors[0])}"
        if lost:
            line += "; " + self.recovery.note(*new)
        return line

    def close(self) -> None:
        self._stop.set()
        self._ticker.join(timeout=2)
        self.checkpoint()
        try:
            self.writer.close()
        except WriterError as exc:
            with self._lock:
                self.errors.extend(exc.errors)
        for run_id in list(self._journals):  # runs that never finished (their writes are all done now)
            self._settle(run_id)
        self._raise_errors()


def lost_answers(journal: _Journal, why: str) -> list[dict]:
    """Recovery-file lines for the run's final answers whose own write failed (finished ``ok``)."""
    spec, plan = journal.started.spec, journal.started.plan
    out = []
    for response_id, (finished, future) in journal.finished.items():
        started = journal.responses.get(response_id)
        if started is None or not finished.is_final_step or finished.status != "ok":
            continue
        if not future.done() or future.exception() is None:
            continue  # stored (or, never expected, still pending)
        earlier = {
            e.step: e.text
            for e, _ in journal.finished.values()
            if e.slot == finished.slot and not e.is_final_step and e.status == "ok"
        }
        scores = journal.scores.get(response_id, [])
        out.append(answer_record(spec, plan, journal.started.run_id, started, finished, earlier, scores, why))
    return out


# -- write jobs (writer thread) ------------------------------------------------------------
def insert_run(db: Database, e: RunStarted) -> None:
    spec = e.spec
    plan_meta = e.plan.model_dump(mode="json", exclude={"steps"})
    if limits := step_limits(e.plan.steps):
        plan_meta[STEP_LIMITS] = limits
    db.table("runs").insert(
        {
            "id": e.run_id,
            "created_at": e.created_at,
            "user_id": spec.user_id,
            "query_id": spec.query_id,
            "expression_type": spec.expression_type,
            "context": spec.context,
            "seed": spec.seed,
            "method": spec.method,
            "label": spec.label,
            "probe_of": spec.probe_of,
            "spec": redact(spec.model_dump_json()),  # a base_url may carry a key
            "plan": json.dumps(plan_meta, ensure_ascii=False),
            "status": "running",
            "pid": os.getpid(),
        }
    )
    for i, step in enumerate(e.plan.steps):
        insert_prompt_step(db, e.run_id, i, step)
    if e.plan.retrieved:
        db.table("retrievals").insert_all(
            {
                "run_id": e.run_id,
                "rank": r.rank,
                "session_id": r.session_id,
                "turn_index": r.turn_index,
                "similarity": r.similarity,
                "is_evidence": int(r.is_evidence),
                "retrieved_by": e.plan.retrieved_by or None,
            }
            for r in e.plan.retrieved
        )


def insert_response(db: Database, e: ResponseStarted) -> None:
    now = _now()
    db.table("responses").insert(
        {
            "id": e.response_id,
            "run_id": e.run_id,
            "slot": e.slot,
            "model": e.model.id,
            "provider": e.model.provider,
            "is_demo": int(e.model.is_demo),
            "params": e.model.params.model_dump_json(),
            "base_url": redact(e.model.base_url),
            "step": e.step,
            "is_final": int(e.is_final_step),
            "request_hash": e.request_hash,
            "text": "",
            "status": "running",
            "pid": os.getpid(),
            "started_at": now,
            "updated_at": now,
        }
    )


#: The note on a response whose answer had a key masked (by the provider's stream or here).
SECRET_NOTE = f"a secret (the value of a key variable) in the answer was replaced by {ANSWER_MASK}"


def finish_response(db: Database, e: ResponseFinished) -> None:
    # Providers mask keys while streaming (core.providers.streaming); this catches any other source.
    mask = answer_redactor()
    text = mask(e.text)
    error = redact(e.error)
    if ANSWER_MASK in text and (error is None or SECRET_NOTE not in error):
        error = SECRET_NOTE if error is None else f"{error}; {SECRET_NOTE}"
    db.table("responses").update(
        e.response_id,
        {
            "text": text,
            "status": e.status,
            "error": error,
            "ttft_ms": e.ttft_ms,
            "duration_ms": e.duration_ms,
            "input_tokens": e.input_tokens,
            "output_tokens": e.output_tokens,
            "cost_usd": e.cost_usd,
            "cache_hit": int(e.cache_hit),
            "cache_read_tokens": e.cache_read_tokens,
            "cache_write_tokens": e.cache_write_tokens,
            "via": e.via,
            "updated_at": _now(),
        },
    )
    if e.status == "ok" and not e.cache_hit:
        row = db.execute("SELECT request_hash, model FROM responses WHERE id = ?", (e.response_id,)).fetchone()
        record = {
            "text": text,
            "chunks": [[t, mask(chunk)] for t, chunk in e.chunks],
            "model": row[1],
            "usage": {"input_tokens": e.input_tokens, "output_tokens": e.output_tokens},
        }
        db.execute(
            "INSERT OR REPLACE INTO response_cache (request_hash, model, record, response_id, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (row[0], row[1], json.dumps(record, ensure_ascii=False), e.response_id, _now()),
        )


def insert_judgment(db: Database, run_id: str, response_id: str | None, j: Judgment) -> None:
    db.table("judgments").insert(
        {
            "run_id": run_id,
            "response_id": response_id,
            "kind": j.kind,
            "dimension": j.dimension,
            "score": j.score,
            "scale_min": j.scale_min,
            "scale_max": j.scale_max,
            "rationale": j.rationale,
            "raw": j.raw,
            "parse_ok": int(j.parse_ok),
            "judge_model": j.judge_model,
            "prompt_version": j.prompt_version,
            "temperature": j.temperature,
            "heuristic": int(j.heuristic),
            "human": int(j.human),
            "error": redact(j.error),
            "extra": json.dumps(j.extra, ensure_ascii=False),
            "created_at": _now(),
        }
    )
