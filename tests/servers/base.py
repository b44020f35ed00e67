"""A scripted SSE server on 127.0.0.1, run in its own thread with its own event loop.

It speaks one provider's wire protocol through an :class:`Encoder` (``openai_sse``,
``anthropic_sse``), serves :class:`~tests.servers.script.Reply` scripts in order, and records every
request it received (secrets redacted) and every client disconnect it observed. Running in a
separate thread keeps it independent of the event loop under test, so a test can cancel, stall or
time out its client without the server noticing anything but the socket.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from aiohttp import web

from tests.servers.script import Reply

SECRET_HEADERS = {"authorization", "x-api-key", "api-key", "proxy-authorization"}


class Encoder(Protocol):
    """Turns a Reply into one provider's SSE frames (each a complete ``bytes`` frame)."""

    name: str
    path: str
    base_suffix: str

    def wants_usage(self, body: dict) -> bool: ...
    def opening(self, reply: Reply, body: dict) -> list[bytes]: ...
    def text(self, reply: Reply, chunk: str) -> bytes: ...
    def closing(self, reply: Reply, body: dict) -> list[bytes]: ...
    def error_frame(self, reply: Reply) -> bytes: ...
    def malformed(self, reply: Reply) -> bytes: ...
    def http_error_body(self, reply: Reply) -> dict: ...


@dataclass
class RecordedRequest:
    method: str
    path: str
    #: Header names lower-cased; secret values replaced by ``<redacted>`` (never stored).
    headers: dict[str, str]
    body: dict | None
    #: Which auth header carried a credential: "bearer", "x-api-key", or None.
    auth: str | None = None
    #: ``time.monotonic()`` when the server received it (gaps between attempts show retry waits).
    at: float = field(default_factory=time.monotonic)


@dataclass
class ServerLog:
    requests: list[RecordedRequest] = field(default_factory=list)
    #: One entry per finished response: "complete", "fault:<kind>", "disconnect", "http:<status>".
    outcomes: list[str] = field(default_factory=list)
    #: Paths of the window questions a client asked (``GET …/models``, ``GET /props``), kept
    #: apart from the model calls above.
    window_asks: list[str] = field(default_factory=list)

    @property
    def disconnects(self) -> int:
        return self.outcomes.count("disconnect")


class _Disconnected(Exception):
    pass


def _redact(headers) -> tuple[dict[str, str], str | None]:
    out: dict[str, str] = {}
    auth = None
    for name, value in headers.items():
        low = name.lower()
        if low in SECRET_HEADERS:
            if low == "authorization" and value.lower().startswith("bearer "):
                auth = auth or "bearer"
            elif low in ("x-api-key", "api-key"):
                auth = "x-api-key"
            out[low] = "<redacted>"
        else:
            out[low] = value
    return out, auth


def _echo(request: web.Request) -> str:
    """What a careless server puts in an error body: the credentials it was sent, and its URL."""
    sent = [f"{name}: {value}" for name, value in request.headers.items() if name.lower() in SECRET_HEADERS]
    return f"request {request.url} with {', '.join(sent) or 'no credentials'}"


class ScriptedServer:
    """Start with :meth:`start` (or use as a context manager); ``base_url`` is what SDKs take."""

    def __init__(self, encoder: Encoder, replies: Iterable[Reply] = (), *, port: int = 0, host: str = "127.0.0.1"):
        self.encoder = encoder
        self.host = host
        self.port = port
        self.log = ServerLog()
        self._replies: list[Reply] = list(replies) or [Reply()]
        self._served = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # ---- public API -------------------------------------------------------------------------
    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The URL to give the SDK (OpenAI: ``…/v1``; Anthropic: no ``/v1``)."""
        return self.root_url + self.encoder.base_suffix

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.log.requests

    def script(self, *replies: Reply) -> ScriptedServer:
        """Replace the script; the request counter restarts at the first reply."""
        with self._lock:
            self._replies = list(replies) or [Reply()]
            self._served = 0
        return self

    def reset(self) -> None:
        self.script(Reply())
        self.log = ServerLog()

    def wait_until(self, predicate: Callable[[ServerLog], bool], timeout: float = 5.0) -> bool:
        """Poll the log from another thread (the server notices disconnects asynchronously)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate(self.log):
                return True
            time.sleep(0.01)
        return predicate(self.log)

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(target=self._run, name=f"{self.encoder.name}-sse-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._startup_error:
            raise RuntimeError(f"{self.encoder.name} test server failed to start") from self._startup_error
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        try:
            fut.result(10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread:
                self._thread.join(10)
            self._loop = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- server thread ------------------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._startup())
        except BaseException as exc:  # reported to start() in the calling thread
            self._startup_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        loop.run_forever()
        loop.close()

    async def _startup(self) -> None:
        # Batch uploads are large (the real APIs take 200 MB files); aiohttp's default cap is 1 MB.
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # the OS-chosen port for port=0

    async def _shutdown(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    async def handle_other(self, request: web.Request, raw: bytes) -> web.StreamResponse | None:
        """Serve a route besides the streaming one (subclasses: the batch APIs), or None for a 404.

        Called for every request after it is recorded; ``raw`` is its body, already read."""
        return None

    def _next_reply(self) -> Reply:
        with self._lock:
            reply = self._replies[min(self._served, len(self._replies) - 1)]
            self._served += 1
        return reply

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        # prepare asks a base_url server its context window once: answered as a server without
        # those routes, and not mixed into the model calls' log.
        if request.method == "GET" and request.path in (self.encoder.base_suffix + "/models", "/props"):
            self.log.window_asks.append(request.path)
            error = {"message": f"no route GET {request.path}", "type": "not_found"}
            return web.json_response({"error": error}, status=404)
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers, auth = _redact(request.headers)
        self.log.requests.append(RecordedRequest(request.method, request.path, headers, body, auth))
        other = await self.handle_other(request, raw)
        if other is not None:
            self.log.outcomes.append(f"http:{other.status}")
            return other
        if request.method != "POST" or request.path != self.encoder.path:
            self.log.outcomes.append("http:404")
            return web.json_response(
                {"error": {"message": f"no route {request.method} {request.path}", "type": "not_found"}}, status=404
            )
        reply = self._next_reply()
        if reply.status != 200:
            self.log.outcomes.append(f"http:{reply.status}")
            headers_out = {"retry-after": reply.retry_after} if reply.retry_after is not None else {}
            if reply.echo_credentials:
                reply = replace(reply, error_message=f"{reply.error_message}; {_echo(request)}")
            return web.json_response(self.encoder.http_error_body(reply), status=reply.status, headers=headers_out)
        return await self._stream(request, reply, body or {})

    async def _stream(self, request: web.Request, reply: Reply, body: dict) -> web.StreamResponse:
        resp = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        enc = self.encoder
        try:
            for frame in enc.opening(reply, body):
                await self._write(request, resp, frame)
            await self._pause(request, reply.first_delay_s)
            for i, chunk in enumerate(reply.chunks):
                if reply.fault and i == reply.fault_after:
                    return await self._fault(request, resp, reply)
                if i:
                    await self._pause(request, reply.delay_s)
                await self._write(request, resp, enc.text(reply, chunk))
            if reply.fault:
                return await self._fault(request, resp, reply)
            for frame in enc.closing(reply, body):
                await self._write(request, resp, frame)
            await resp.write_eof()
            self.log.outcomes.append("complete")
        except (_Disconnected, ConnectionResetError):
            self.log.outcomes.append("disconnect")
        return resp

    async def _fault(self, request: web.Request, resp: web.StreamResponse, reply: Reply) -> web.StreamResponse:
        kind = reply.fault
        if kind == "error_frame":
            await self._write(request, resp, self.encoder.error_frame(reply))
            await resp.write_eof()
        elif kind == "eof":
            await resp.write_eof()
        elif kind == "malformed":
            await self._write(request, resp, self.encoder.malformed(reply))
            await resp.write_eof()
        elif kind == "drop":
            # Close the socket without the terminating chunk: the client sees an incomplete body.
            resp.force_close()
            if request.transport is not None:
                request.transport.close()
        elif kind == "stall":
            try:
                await self._pause(request, reply.stall_s)
            except _Disconnected:
                self.log.outcomes.append("disconnect")
                return resp
            if request.transport is not None:
                request.transport.close()
        self.log.outcomes.append(f"fault:{kind}")
        return resp

    @staticmethod
    async def _write(request: web.Request, resp: web.StreamResponse, frame: bytes) -> None:
        if request.transport is None or request.transport.is_closing():
            raise _Disconnected
        await resp.write(frame)

    @staticmethod
    async def _pause(request: web.Request, seconds: float) -> None:
        """Sleep, noticing a client that hangs up meanwhile."""
        end = time.monotonic() + seconds
        while True:
            if request.transport is None or request.transport.is_closing():
                raise _Disconnected
            left = end - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, 0.02))


def sse(data: dict | str, event: str | None = None) -> bytes:
    """One SSE frame: optional ``event:`` line, one ``data:`` line, blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()
