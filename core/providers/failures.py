"""Turning SDK and transport exceptions into actionable :class:`Error` events.

openai, anthropic and litellm share one shape of exception hierarchy (status errors with a
response, connection and timeout errors, a generic API error for mid-stream error frames) but
different classes, and anthropic's transport is ``httpx2`` rather than ``httpx``. A
:class:`Family` names the classes of one SDK; :func:`classify` does the rest.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from core.providers.events import Error
from core.providers.streaming import NotAModelStream, StreamState

_JSON_MESSAGE = re.compile(r'"message":\s*"((?:[^"\\]|\\.)*)"')
_LITELLM_PREFIX = re.compile(r"^(litellm\.\w+: )+(\w+: )?(\w+(Exception|Error) - )?")
_LITELLM_HANDLE = re.compile(r"\s*Handle with `litellm\.\w+`\.?")


@dataclass(frozen=True)
class Family:
    """The exception classes of one SDK (tuples, so several libraries can share a family)."""

    status_error: tuple[type[BaseException], ...]
    timeout_error: tuple[type[BaseException], ...]
    connection_error: tuple[type[BaseException], ...]
    api_error: tuple[type[BaseException], ...]
    read_timeout: tuple[type[BaseException], ...]
    transport_error: tuple[type[BaseException], ...]
    #: Env var holding the key, for 401/403 advice.
    key_env: str
    #: Transport errors that mean "never connected" (checked before ``transport_error``).
    connect_error: tuple[type[BaseException], ...] = ()


def openai_family(*, key_env: str, read_timeout: tuple[type[BaseException], ...] | None = None) -> Family:
    """The openai SDK's classes (also what litellm raises for most routes)."""
    import httpx
    import openai

    return Family(
        status_error=(openai.APIStatusError,),
        timeout_error=(openai.APITimeoutError,),
        connection_error=(openai.APIConnectionError,),
        api_error=(openai.APIError,),
        read_timeout=read_timeout or (httpx.ReadTimeout,),
        transport_error=(httpx.TransportError,),
        connect_error=(httpx.ConnectError, httpx.ConnectTimeout),
        key_env=key_env,
    )


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``retry-after`` (or ``retry-after-ms``) header; None when absent or a date."""
    # litellm keeps the real headers on the exception; its .response is a synthetic one.
    headers = getattr(exc, "litellm_response_headers", None)
    if not headers:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms") is not None:
            return float(headers["retry-after-ms"]) / 1000
        if headers.get("retry-after") is not None:
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


def _detail(exc: BaseException) -> str:
    """The provider's own error message, without the SDK's 'Error code: …' dump when possible."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            kind = err.get("type")
            msg = err.get("message")
            if msg:
                return f"{msg} ({kind})" if kind and kind not in str(msg) else str(msg)
    return clean_message(str(getattr(exc, "message", None) or exc)) or type(exc).__name__


def clean_message(text: str) -> str:
    """The provider's words from litellm's nested "litellm.X: YException - b'{…"message": …}'" text."""
    inner = _JSON_MESSAGE.search(text)
    if inner:
        return inner.group(1)
    text = _LITELLM_PREFIX.sub("", text.strip())
    return _LITELLM_HANDLE.sub("", text).strip()


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def classify(exc: BaseException, state: StreamState, fam: Family) -> Error:
    label = state.label
    bfb = not state.streamed
    where = state.where()
    if isinstance(exc, NotAModelStream):
        return Error(
            f"{label} answered with an HTML page (status {exc.status}), not a model stream: check the base_url "
            "(a wrong address, a captive portal or a proxy's sign-in page answers this way)",
            kind="config",
            status=exc.status,
            before_first_byte=bfb,
        )
    if isinstance(exc, fam.status_error):
        status = status_of(exc)
        detail = _detail(exc)
        if status == 200 or state.streamed:
            # anthropic raises a status error for an in-stream `event: error` frame (status 200).
            return Error(f"{label} sent an error mid-stream {where}: {detail}", kind="stream", before_first_byte=bfb)
        return _http_error(exc, status, detail, state, fam)
    if isinstance(exc, fam.timeout_error):
        return Error(
            f"{label} timed out before responding; the server may be overloaded or the endpoint unreachable",
            kind="timeout",
            before_first_byte=bfb,
        )
    if isinstance(exc, fam.connection_error) or isinstance(exc, fam.connect_error):
        cause = exc.__cause__ or exc.__context__
        why = f": {cause}" if cause else ""
        return Error(
            f"could not connect to {label}{why}; is the server running and the base_url right?",
            kind="transport",
            before_first_byte=bfb,
        )
    if isinstance(exc, fam.api_error):
        return Error(f"{label} sent an error mid-stream {where}: {_detail(exc)}", kind="stream", before_first_byte=bfb)
    if isinstance(exc, fam.read_timeout):
        return Error(
            f"{label} stream stalled: no data within the read timeout {where}; the partial reply is kept",
            kind="timeout",
            before_first_byte=bfb,
        )
    if isinstance(exc, fam.transport_error):
        name = type(exc).__name__
        return Error(
            f"{label} connection dropped mid-stream {where} ({name}: {exc}); the partial reply is kept, retry the call",
            kind="transport",
            before_first_byte=bfb,
        )
    if isinstance(exc, json.JSONDecodeError):
        return Error(f"{label} sent a malformed stream frame {where}: {exc}", kind="stream", before_first_byte=bfb)
    return Error(f"{label} failed {where}: {type(exc).__name__}: {exc}", kind="stream", before_first_byte=bfb)


def _http_error(exc: BaseException, status: int | None, detail: str, state: StreamState, fam: Family) -> Error:
    label = state.label
    if status == 429:
        ra = retry_after(exc)
        wait = f" (retry-after {ra:g}s)" if ra is not None else ""
        return Error(
            f"429 rate limited by {label}{wait}: {detail}. Wait, or lower the concurrency",
            kind="rate_limit",
            status=429,
            before_first_byte=True,
            retry_after=ra,
        )
    if status in (401, 403):
        advice = (
            f"check the key in ${fam.key_env}" if fam.key_env else "check the key for this endpoint or litellm route"
        )
        return Error(
            f"{status} {label} refused the credentials: {detail}; {advice}",
            kind="http",
            status=status,
            before_first_byte=True,
        )
    if status == 404:
        return Error(
            f"404 from {label}: {detail}; check the model name and the base_url",
            kind="http",
            status=404,
            before_first_byte=True,
        )
    if status in (400, 422):
        return Error(
            f"{status} {label} rejected the request: {detail}; check the model params (max_tokens, "
            "temperature, reasoning_effort) and the context length",
            kind="http",
            status=status,
            before_first_byte=True,
        )
    if status is not None and status >= 500:
        return Error(
            f"{status} server error from {label}: {detail}; try again later",
            kind="http",
            status=status,
            before_first_byte=True,
            retry_after=retry_after(exc),
        )
    return Error(f"{status} from {label}: {detail}", kind="http", status=status, before_first_byte=True)
