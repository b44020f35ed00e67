"""From engine events to UI messages, without a message per token.

The engine calls the bridge synchronously on the app's event loop. Token text is appended to a
per-response buffer and at most one ``TokensPending`` is in the queue at any time; the run view
drains all buffers when it handles it. Drains are at most one per ``FRAME_S`` (the first batch
after a quiet spell goes at once): four fast streams would otherwise re-render each pane about a
hundred times a second for no visible gain (bench/tui.py). Every other event becomes one ``EngineEvent``, posted
after any text of its response still buffered so a pane never finishes before its last tokens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from textual.message import Message
from textual.message_pump import MessagePump

from core.run.spec import RunEvent, TokensArrived

FRAME_S = 0.04


@dataclass
class EngineEvent(Message):
    """One non-token engine event (run/response started or finished, a judge's score)."""

    event: RunEvent


@dataclass
class TokensPending(Message):
    """Streamed text is waiting in the bridge's buffers. Carries nothing, so any later one can
    replace an earlier one: the handler drains every buffer at once."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TokensPending)


class EngineBridge:
    def __init__(self, target: MessagePump, also: Callable[[RunEvent], None] | None = None):
        self._target = target
        self._also = also
        self._buffers: dict[str, list[str]] = {}
        self._pending = False
        self._last_drain = 0.0

    def __call__(self, event: RunEvent) -> None:
        if self._also is not None:
            self._also(event)  # the storage recorder sees every event, tokens included
        if isinstance(event, TokensArrived):
            self._buffers.setdefault(event.response_id, []).append(event.text)
            if not self._pending:
                self._pending = True
                wait = FRAME_S - (time.monotonic() - self._last_drain)
                if wait > 0:
                    self._target.set_timer(wait, self._post_pending)
                else:
                    self._target.post_message(TokensPending())
            return
        self._target.post_message(EngineEvent(event))

    def _post_pending(self) -> None:
        self._target.post_message(TokensPending())

    def drain(self) -> dict[str, str]:
        """All buffered text per response, emptying the buffers."""
        self._pending = False
        self._last_drain = time.monotonic()
        out = {rid: "".join(parts) for rid, parts in self._buffers.items() if parts}
        self._buffers.clear()
        return out

    def put_back(self, response_id: str, text: str) -> None:
        """Text drained before its pane existed goes back in front of anything newer."""
        if text:
            self._buffers.setdefault(response_id, []).insert(0, text)

    def take(self, response_id: str) -> str:
        return "".join(self._buffers.pop(response_id, []))
