"""OpenAI Chat Completions SSE (``POST /v1/chat/completions``), as providers.md describes it.

Outside pytest (bench scripts, manual demos)::

    from tests.servers.openai_sse import serve
    from tests.servers.script import Reply
    with serve([Reply.text("Hello there", delay_s=0.01)]) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="not-needed")
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from contextlib import contextmanager

from tests.servers.base import ScriptedServer, sse
from tests.servers.script import Reply

_ERROR_TYPES = {401: "invalid_request_error", 404: "invalid_request_error", 429: "requests", 500: "server_error"}
_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


class OpenAIEncoder:
    name = "openai"
    path = "/v1/chat/completions"
    base_suffix = "/v1"

    def wants_usage(self, body: dict) -> bool:
        return bool((body.get("stream_options") or {}).get("include_usage"))

    def _chunk(self, reply: Reply, choices: list, usage=None, with_usage_key: bool = False) -> bytes:
        data = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": reply.model,
            "system_fingerprint": "fp_test",
            "choices": choices,
        }
        if with_usage_key:
            data["usage"] = usage
        return sse(data)

    def opening(self, reply: Reply, body: dict) -> list[bytes]:
        choice = {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}
        return [self._chunk(reply, [choice], with_usage_key=self.wants_usage(body))]

    def text(self, reply: Reply, chunk: str) -> bytes:
        choice = {"index": 0, "delta": {"content": chunk}, "logprobs": None, "finish_reason": None}
        return self._chunk(reply, [choice])

    def closing(self, reply: Reply, body: dict) -> list[bytes]:
        wants = self.wants_usage(body)
        done = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": reply.finish_reason}
        frames = [self._chunk(reply, [done], with_usage_key=wants)]
        usage = openai_usage(reply)
        if wants and usage is not None:
            frames.append(self._chunk(reply, [], usage=usage, with_usage_key=True))
        frames.append(sse("[DONE]"))
        return frames

    def error_frame(self, reply: Reply) -> bytes:
        return sse(
            {
                "error": {
                    "message": reply.error_message,
                    "type": reply.error_type or "server_error",
                    "param": None,
                    "code": None,
                }
            }
        )

    def malformed(self, reply: Reply) -> bytes:
        return b'data: {"id":"chatcmpl-test","choices":[{"index":0,"delta":{"content":"tru\n\n'

    def http_error_body(self, reply: Reply) -> dict:
        return {
            "error": {
                "message": reply.error_message,
                "type": reply.error_type or _ERROR_TYPES.get(reply.status, "server_error"),
                "param": None,
                "code": _ERROR_CODES.get(reply.status),
            }
        }


def openai_usage(reply: Reply) -> dict | None:
    """Chat Completions ``usage``: ``prompt_tokens`` is the whole prompt, cached tokens included."""
    if reply.usage is None:
        return None
    i, o = reply.usage
    usage: dict = {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}
    if reply.cache_read is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cache_read}
    return usage


class OpenAIServer(ScriptedServer):
    def __init__(self, replies: Iterable[Reply] = (), *, port: int = 0):
        super().__init__(OpenAIEncoder(), replies, port=port)


@contextmanager
def serve(replies: Iterable[Reply] | Reply = (), *, port: int = 0):
    """Run an OpenAI-protocol server for the block; yields it (``.base_url`` ends in ``/v1``)."""
    if isinstance(replies, Reply):
        replies = [replies]
    with OpenAIServer(replies, port=port) as server:
        yield server
