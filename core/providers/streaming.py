"""The loop every real provider shares: an overall deadline, first-byte tracking, no raising.

A provider writes a *producer*: an async generator that talks to its SDK, yields ``Delta`` /
``Usage`` / ``Done`` and simply lets SDK or transport exceptions escape. :func:`guarded` runs it
under the call's deadline and turns whatever escapes into one :class:`Error` event, using the
provider's *classifier*. Cancellation is never swallowed: a cancelled task propagates
``CancelledError`` through the producer, whose ``async with`` / ``finally`` closes the stream.

Secrets: error messages are redacted, and the answer's text goes through a
:class:`~core.providers.redact.StreamRedactor`, so a key the model (or a server) puts in an answer
is masked before the engine, the screen, the database or the response cache see it.

Consumers should iterate with ``contextlib.aclosing(provider.stream(...))`` so that breaking out
of the loop closes the connection at once rather than when the generator is garbage-collected.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, replace

from core.providers.events import Delta, Done, Error, StreamEvent, Usage
from core.providers.redact import StreamRedactor, redact


@dataclass
class StreamState:
    """What had happened when a failure struck; classifiers use it to word their message."""

    label: str
    chars: int = 0
    deltas: int = 0

    @property
    def streamed(self) -> bool:
        return self.deltas > 0

    def where(self) -> str:
        return f"after {self.chars} chars of output" if self.streamed else "before any output"


Classifier = Callable[[BaseException, StreamState], Error]

#: Media types of a web page: what a captive portal, a proxy's sign-in page or a website answers.
_PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml"})


class NotAModelStream(Exception):
    """A streaming request answered with a web page, not a model stream (a wrong base_url, a
    captive portal). The SDKs read such a body as a stream without one event, which would pass
    for a reply cut short (or, through litellm, for an empty finished one)."""

    def __init__(self, status: int | None, content_type: str):
        super().__init__(f"an HTML page ({content_type}, status {status}) instead of a model stream")
        self.status = status
        self.content_type = content_type


def check_model_stream(status: int | None, headers) -> None:
    """Raise :class:`NotAModelStream` when the response to a streaming request (its status and
    headers, a mapping) is an HTML page."""
    content_type = next((str(v) for k, v in (headers or {}).items() if str(k).lower() == "content-type"), "")
    if content_type.split(";", 1)[0].strip().lower() in _PAGE_TYPES:
        raise NotAModelStream(status, content_type)


async def guarded(
    producer: AsyncGenerator[StreamEvent, None], *, timeout_s: float, classify: Classifier, label: str
) -> AsyncGenerator[StreamEvent, None]:
    """Yield the producer's events; end with exactly one ``Error`` if anything goes wrong."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    state = StreamState(label=label)
    secrets = StreamRedactor()
    try:
        while True:
            window = asyncio.timeout_at(deadline)
            try:
                async with window:
                    event = await anext(producer)
            except StopAsyncIteration:
                if held := secrets.flush():
                    yield Delta(held)
                return
            except TimeoutError as exc:
                if held := secrets.flush():
                    yield Delta(held)
                if window.expired():
                    yield _redacted(
                        Error(
                            f"{label}: no complete reply within the {timeout_s:g}s deadline ({state.where()}); "
                            "raise the model's timeout_s or lower max_tokens",
                            kind="timeout",
                            before_first_byte=not state.streamed,
                        )
                    )
                else:
                    yield _redacted(classify(exc, state))
                return
            except Exception as exc:  # noqa: BLE001 - every failure becomes an Error event, by contract
                if held := secrets.flush():
                    yield Delta(held)
                yield _redacted(classify(exc, state))
                return
            if isinstance(event, Delta):
                state.deltas += 1
                state.chars += len(event.text)
                if shown := secrets.feed(event.text):
                    yield replace(event, text=shown)
                continue
            if held := secrets.flush():
                yield Delta(held, event.t)
            yield event
    finally:
        await producer.aclose()


def _redacted(err: Error) -> Error:
    """The error with secrets removed: servers echo keys and headers in their error bodies."""
    return replace(err, message=redact(err.message))


async def openai_chunk_events(chunks) -> AsyncGenerator[StreamEvent, None]:
    """Delta, Usage, Done from OpenAI-format chat-completion chunks (the openai SDK's and
    litellm's): usage arrives on a final chunk without choices; guard ``if chunk.choices``."""
    usage = None
    finish = None
    async for chunk in chunks:
        chunk_usage = getattr(chunk, "usage", None)
        if chunk_usage is not None:
            usage = chunk_usage
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        if choice.delta is not None and choice.delta.content:
            yield Delta(choice.delta.content)
        if choice.finish_reason:
            finish = choice.finish_reason
    if usage is not None:
        yield openai_usage(usage)
    yield Done(finish, complete=finish is not None)


def openai_usage(usage) -> Usage:
    """Usage from an OpenAI-format ``usage`` object (streamed or in a batch result's body, as an
    object or a dict): ``prompt_tokens`` already includes ``prompt_tokens_details.cached_tokens``."""

    def get(obj, name):
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    details = get(usage, "prompt_tokens_details")
    cached = get(details, "cached_tokens") if details is not None else None
    return Usage(get(usage, "prompt_tokens"), get(usage, "completion_tokens"), cache_read_tokens=cached)
