"""What a scripted protocol server does with one request: a :class:`Reply`.

A server holds a list of replies and serves them in order, one per request; the last one repeats.
So ``[Reply.http_error(429, retry_after="0"), Reply.text("Hi")]`` makes the first attempt fail
and every later attempt succeed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: ``eof`` ends the stream cleanly but without its finish frames (no finish_reason / [DONE] /
#: message_stop), as a proxy that cuts a reply short does.
Fault = Literal["error_frame", "drop", "stall", "malformed", "eof"]


@dataclass
class Reply:
    #: Text deltas, streamed one frame each.
    chunks: list[str] = field(default_factory=lambda: ["Hello", ",", " world", "."])
    #: Seconds before the first text frame (after headers and the role/start frames).
    first_delay_s: float = 0.0
    #: Seconds between text frames.
    delay_s: float = 0.0
    #: (input tokens, output tokens) reported at the end; None sends no usage. The input count is
    #: EVERY prompt token, cached ones included (OpenAI's ``prompt_tokens``); the Anthropic server
    #: reports ``input_tokens`` without the cache reads and writes, as Anthropic does.
    usage: tuple[int, int] | None = (11, 4)
    #: Prompt tokens served from the provider's prompt cache (OpenAI
    #: ``prompt_tokens_details.cached_tokens``, Anthropic ``cache_read_input_tokens``); None: not reported.
    cache_read: int | None = None
    #: Prompt tokens written to the cache (Anthropic ``cache_creation_input_tokens``; OpenAI has none).
    cache_write: int | None = None
    finish_reason: str = "stop"
    #: Non-200 → an HTTP error response with the provider's JSON error body, no stream.
    status: int = 200
    error_message: str = "scripted failure"
    error_type: str | None = None
    retry_after: str | None = None
    #: Put the request's credential headers and URL into the HTTP error message (a careless server).
    echo_credentials: bool = False
    #: A failure injected after ``fault_after`` text frames.
    fault: Fault | None = None
    fault_after: int = 1
    #: How long a ``stall`` lasts before the server gives up and closes.
    stall_s: float = 30.0
    model: str = "test-model"

    def __post_init__(self) -> None:
        cached = (self.cache_read or 0) + (self.cache_write or 0)
        if self.usage is not None and cached > self.usage[0]:
            raise ValueError(f"cache_read + cache_write ({cached}) exceed the prompt tokens ({self.usage[0]})")

    @classmethod
    def text(cls, text: str, *, pieces: int | None = None, **kw) -> Reply:
        """Split ``text`` into word-ish frames (or ``pieces`` roughly equal ones)."""
        if pieces:
            step = max(1, -(-len(text) // pieces))
            chunks = [text[i : i + step] for i in range(0, len(text), step)]
        else:
            chunks = [w for w in _words(text)]
        return cls(chunks=chunks, **kw)

    @classmethod
    def http_error(cls, status: int, message: str = "scripted failure", **kw) -> Reply:
        return cls(status=status, error_message=message, **kw)

    @property
    def text_value(self) -> str:
        return "".join(self.chunks)


def _words(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for i in range(1, len(text)):
        if text[i] == " ":
            out.append(text[start:i])
            start = i
    out.append(text[start:])
    return [w for w in out if w]
