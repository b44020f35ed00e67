"""Recording responses for replay: the request hash, the record format, an in-memory cache.

A record is ``{"model", "text", "chunks": [[t_seconds, text], …], "usage": {"input_tokens",
"output_tokens"}, "finish_reason"}`` where each ``t`` is the chunk's offset in seconds from the
start of the call (so the first one is the time to first token). This is also what
``storage.recorder`` writes from the engine's ``ResponseFinished.chunks``. The engine builds one with
:class:`Recorder` from a finished event stream and stores it under :func:`request_hash` through the
``ResponseCache`` port; ``replay:`` serves it back with the same pacing.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable

from core.plan import Message
from core.providers.base import ModelParams
from core.providers.events import Delta, Done, Error, StreamEvent, Usage

#: Params that do not change what a model says, so they do not change the hash.
_NOT_HASHED = {"timeout_s"}


def request_hash(
    provider_model_id: str, messages: list[Message] | list[dict], params: ModelParams | dict | None = None
) -> str:
    """sha256 of a canonical JSON of (model id, messages, params). Never includes keys or base_url."""
    if isinstance(params, ModelParams):
        params = params.model_dump()
    clean = {k: v for k, v in (params or {}).items() if v is not None and k not in _NOT_HASHED}
    msgs = [
        {"role": m.role, "content": m.content}
        if isinstance(m, Message)
        else {"role": m["role"], "content": m["content"]}
        for m in messages
    ]
    canonical = json.dumps(
        {"model": provider_model_id, "messages": msgs, "params": clean},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class Recorder:
    """Accumulates one call's events; :meth:`record` returns the replayable record (or None)."""

    def __init__(self, model_id: str, started_at: float | None = None):
        self.model_id = model_id
        self.started_at = time.monotonic() if started_at is None else started_at
        self.chunks: list[list] = []
        self.usage: dict | None = None
        self.finish_reason: str | None = None
        self.done = False
        self.failed = False

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, Delta):
            self.chunks.append([round(max(0.0, event.t - self.started_at), 6), event.text])
        elif isinstance(event, Usage):
            self.usage = {"input_tokens": event.input_tokens, "output_tokens": event.output_tokens}
        elif isinstance(event, Done):
            self.done = True
            self.finish_reason = event.finish_reason
        elif isinstance(event, Error):
            self.failed = True

    def extend(self, events: Iterable[StreamEvent]) -> Recorder:
        for e in events:
            self.add(e)
        return self

    def record(self) -> dict | None:
        """Only complete responses are worth replaying; a failed or unfinished call gives None."""
        if not self.done or self.failed:
            return None
        return {
            "model": self.model_id,
            "text": "".join(c[1] for c in self.chunks),
            "chunks": self.chunks,
            "usage": self.usage,
            "finish_reason": self.finish_reason,
        }


class MemoryResponseCache:
    """A ``core.ports.ResponseCache`` in a dict (tests, and runs without a database)."""

    def __init__(self):
        self._records: dict[str, dict] = {}

    def get(self, request_hash: str) -> dict | None:
        return self._records.get(request_hash)

    def put(self, request_hash: str, record: dict) -> None:
        self._records[request_hash] = record

    def __len__(self) -> int:
        return len(self._records)
