"""A local OpenAI-compatible server that says (or does not say) its context window.

Besides ``POST /v1/chat/completions`` it answers the GETs self-hosted servers answer:

* ``GET /v1/models``: the model list, each entry with ``max_model_len`` as vLLM writes it when
  ``max_model_len`` is given, without it (as Ollama's ``/v1/models``) otherwise;
* ``GET /props``: llama.cpp ``llama-server``'s ``{"default_generation_settings": {"n_ctx": …}}``
  when ``n_ctx`` is given (``n_ctx_top_level``: the older top-level ``"n_ctx"``), else 404.

Every GET is answered here (404 for any other path) and recorded in ``window_asks`` (secrets
redacted), apart from ``log.requests``, which keeps the model calls alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from aiohttp import web

from tests.servers.base import RecordedRequest, _Disconnected, _redact
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply


class LocalModelServer(OpenAIServer):
    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        models: Iterable[str] | None = ("test-model",),
        max_model_len: int | None = None,
        n_ctx: int | None = None,
        n_ctx_top_level: bool = False,
        answer_delay_s: float = 0.0,
        answer_when: Callable[[], object] | None = None,
    ):
        super().__init__(replies)
        #: None: no ``/v1/models`` route at all (404).
        self.models = list(models) if models is not None else None
        self.max_model_len = max_model_len
        self.n_ctx = n_ctx
        self.n_ctx_top_level = n_ctx_top_level
        #: How long the GETs take to answer (a slow server; 3600: one that never does in a test).
        self.answer_delay_s = answer_delay_s
        #: The GETs are answered only once this is true (say, once another server has been asked).
        self.answer_when = answer_when
        #: Every GET received, in order.
        self.window_asks: list[RecordedRequest] = []

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.method != "GET":
            return await super()._handle(request)
        headers, auth = _redact(request.headers)
        self.window_asks.append(RecordedRequest(request.method, request.path, headers, None, auth, time.monotonic()))
        try:  # a client that gives up meanwhile ends the wait: nothing is left pending at stop()
            await self._pause(request, self.answer_delay_s)
            while self.answer_when is not None and not self.answer_when():
                await self._pause(request, 0.01)
        except _Disconnected:
            return web.Response(status=499)  # nobody is left to read it
        doc = self._window_doc(request.path)
        if doc is None:
            return web.json_response({"error": {"message": f"no route GET {request.path}"}}, status=404)
        return web.json_response(doc)

    def _window_doc(self, path: str) -> dict | None:
        if path == "/v1/models" and self.models is not None:
            entries = []
            for model in self.models:
                entry = {"id": model, "object": "model", "created": 1_700_000_000, "owned_by": "prefscope-tests"}
                if self.max_model_len is not None:
                    entry["max_model_len"] = self.max_model_len
                entries.append(entry)
            return {"object": "list", "data": entries}
        if path == "/props" and self.n_ctx is not None:
            if self.n_ctx_top_level:
                return {"n_ctx": self.n_ctx, "total_slots": 1}
            return {"default_generation_settings": {"n_ctx": self.n_ctx, "temperature": 0.8}, "total_slots": 1}
        return None
