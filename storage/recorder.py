"""The run recorder: persists engine events through the single writer, and never loses a token
for longer than a checkpoint interval.

``record(event)`` is called on the engine's event loop and must stay cheap: token text goes into
an in-memory buffer; a ticker thread submits a checkpoint of every response whose text changed
at most every ``CHECKPOINT_S`` seconds, so a crash (even ``kill -9``) loses at most that much of
any partial answer. Everything else becomes one write job on the writer thread.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import cast

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
from storage.prompt_messages import insert_prompt_step
from storage.writer import WRITE_DEADLINE_S, Writer, WriterError

CHECKPOINT_S = 0.25


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class RunRecorder:
    def __init__(
        self, db_path: str | Path, *, checkpoint_s: float = CHECKPOINT_S, write_deadline_s: float = WRITE_DEADLINE_S
    ):
        self.writer = Writer(db_path, deadline_s=write_deadline_s)
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
            self._write(event.run_id, lambda db: insert_run(db, event))
        elif isinstance(event, ResponseStarted):
            with self._lock:
                self._text[event.response_id] = []
            self._write(event.run_id, lambda db: insert_response(db, event))
        elif isinstance(event, ResponseFinished):
            with self._lock:
                self._text.pop(event.response_id, None)
                self._dirty.discard(event.response_id)
            self._write(event.run_id, lambda db: finish_response(db, event))
        elif isinstance(event, JudgeScored):
            # JudgeScored types its judgment as object; once it says Judgment, warn_redundant_casts flags this cast.
            judgment = cast(Judgment, event.judgment)
            self._write(event.run_id, lambda db: insert_judgment(db, event.run_id, event.response_id, judgment))
        elif isinstance(event, RunFinished):
            self._write(
                event.run_id,
                lambda db: db.execute(
                    "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (event.status, _now(), event.run_id)
                ),
            )

    def _write(self, run_id: str, job: Callable[[Database], object]) -> None:
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

        self.writer.submit(tracked).add_done_callback(refused)

    def _lost(self, run_id: str, exc: BaseException | None) -> None:
        with self._lock:
            if run_id not in self.unstored:
                self.unstored[run_id] = f"{type(exc).__name__}: {exc}"
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
        """Wait for every write; raise WriterError (once) for the runs' writes that failed."""
        self.checkpoint()
        self.writer.flush()
        self._raise_errors()

    def _raise_errors(self) -> None:
        with self._lock:
            errors, self.errors = self.errors, []
        if errors:
            raise WriterError(errors)

    def close(self) -> None:
        self._stop.set()
        self._ticker.join(timeout=2)
        self.checkpoint()
        self.writer.close()
        self._raise_errors()


# -- write jobs (writer thread) ------------------------------------------------------------
def insert_run(db: Database, e: RunStarted) -> None:
    spec = e.spec
    plan_meta = e.plan.model_dump(mode="json", exclude={"steps"})
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
