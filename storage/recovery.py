"""Answers that were paid for but could not be stored, saved beside the database as JSON Lines.

When the recorder cannot store a finished answer (the disk filled up while the model answered,
the database became read-only after the write check, a lock held past ``write_deadline_s``), the
answer is appended to ``<database>.recovered-<UTC time>-<pid>.jsonl`` in the database's folder,
and the message naming the lost writes names this file. Each line is the generic results layout
that ``prefscope import-results FILE`` reads (:mod:`core.results.generic_jsonl`): ``user``,
``query``, ``model``, ``answer``, the exact ``messages`` sent, ``method``, ``context``, ``turns``,
and ``meta.recovered`` with the rest (run and response ids, the run's settings with keys
redacted, the answer's status, tokens, cost and timings, earlier steps' replies, judge scores and
why the write failed). Importing it stores each answer as a run of model ``imported:<model>``.

A line is written whole or not at all (a write cut short by a full disk is truncated away), so the
file always imports; the file is readable by its owner only, like the answers in the database.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import threading
from pathlib import Path

from core.judges.base import Judgment
from core.plan import PromptPlan, fill
from core.providers.redact import answer_redactor, redact
from core.run.spec import ResponseFinished, ResponseStarted, RunSpec


def recovery_path(db_path: str | Path, now: dt.datetime | None = None) -> Path:
    """A new recovery file's name: next to the database, unique per second and process."""
    db = Path(db_path).expanduser()
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    return db.with_name(f"{db.name}.recovered-{stamp}-{os.getpid()}.jsonl")


def answer_record(
    spec: RunSpec,
    plan: PromptPlan,
    run_id: str,
    started: ResponseStarted,
    finished: ResponseFinished,
    earlier: dict[str, str],
    scores: list[Judgment],
    why: str,
) -> dict:
    """One line of the recovery file: a final answer of run ``run_id`` and what produced it.
    ``earlier``: the replies of the slot's earlier steps (by step name), ``scores``: its Judgments."""
    mask = answer_redactor()
    recovered = {
        "run_id": run_id,
        "response_id": finished.response_id,
        "label": spec.label,
        "status": finished.status,
        "error": redact(finished.error),
        "model": started.model.id,
        "input_tokens": finished.input_tokens,
        "output_tokens": finished.output_tokens,
        "cost_usd": finished.cost_usd,
        "ttft_ms": finished.ttft_ms,
        "duration_ms": finished.duration_ms,
        "spec": json.loads(redact(spec.model_dump_json()) or "{}"),  # a base_url may carry a key
        "earlier_steps": {name: mask(text) for name, text in earlier.items()},
        "scores": [_score(j) for j in scores],
        "not_stored_because": why,
    }
    record: dict = {
        "user": spec.user_id,
        "query": spec.query_id,
        "model": started.model.id,
        "answer": mask(finished.text),
        "method": spec.method,
        "context": spec.context,
        "meta": {"recovered": recovered},
    }
    messages = _messages_sent(plan, started.step, earlier)
    if messages is not None:
        record["messages"] = messages
    if spec.turns is not None:
        record["turns"] = spec.turns
    return record


def _messages_sent(plan: PromptPlan, step_name: str, earlier: dict[str, str]) -> list[dict] | None:
    step = next((s for s in plan.steps if s.name == step_name), None)
    if step is None:
        return None
    try:
        return [m.model_dump(mode="json") for m in fill(step, earlier)]
    except KeyError:  # an earlier step's reply is missing: the messages cannot be rebuilt
        return None


def _score(judgment: Judgment) -> dict:
    data = dataclasses.asdict(judgment)
    data["error"] = redact(judgment.error)  # as insert_judgment stores it
    return data


class RecoveryFile:
    """The recovery file of one recorder, created when the first answer needs it."""

    def __init__(self, db_path: str | Path):
        self.db_path = Path(db_path)
        self.path: Path | None = None
        #: Answers written to the file, and answers that could not be (``failed`` says why).
        self.saved = 0
        self.unsaved = 0
        self.failed: str | None = None
        #: Lines written without the messages sent, for want of room for them.
        self.without_messages = 0
        self._lock = threading.Lock()

    def append(self, records: list[dict]) -> None:
        """Append ``records`` as lines, each whole or not at all; a line with no room for the
        messages sent is written without them (the answer is what was paid for); a failure is kept
        in ``failed``."""
        with self._lock:
            for record in records:
                self._append(record)

    def _append(self, record: dict) -> None:
        if str(self.db_path) == ":memory:":
            self.unsaved += 1
            self.failed = "the database is in memory: there is no folder to save them in"
            return
        if self.path is None:
            self.path = recovery_path(self.db_path)
        failed = _append_whole(self.path, _line(record))
        if failed is not None and "messages" in record:
            slim = {k: v for k, v in record.items() if k != "messages"}
            if _append_whole(self.path, _line(slim)) is None:
                self.without_messages += 1
                failed = None
        if failed is None:
            self.saved += 1
        else:
            self.unsaved += 1
            self.failed = failed.strerror or str(failed)

    def note(self, saved: int | None = None, unsaved: int | None = None) -> str:
        """What became of the lost answers (default: all of them; else the counts given), for the
        message reporting them."""
        saved = self.saved if saved is None else saved
        unsaved = self.unsaved if unsaved is None else unsaved
        parts = []
        if saved:
            them = "it" if saved == 1 else "them"
            parts.append(
                f"{'it was' if saved == 1 else f'{saved} were'} saved to {self.path}: "
                f"`prefscope import-results {self.path}` stores {them} once the database takes writes"
            )
        if self.without_messages:
            parts.append(f"{self.without_messages} without the messages sent (no room left for them)")
        if unsaved:
            where = self.path or "a file beside it"
            parts.append(f"{unsaved} could not be saved to {where} either ({self.failed})")
        return "; ".join(parts)


def _line(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def _append_whole(path: Path, data: bytes) -> OSError | None:
    """Append ``data`` to ``path`` (created for its owner only); a write cut short is undone.
    The error, or None once the bytes are on the disk."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as exc:
        return exc
    try:
        start = os.fstat(fd).st_size
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, start)
            if start == 0:
                path.unlink()  # no empty file named in a message
        except OSError:
            pass  # the half line stays; the error is reported all the same
        return exc
    finally:
        os.close(fd)
    return None
