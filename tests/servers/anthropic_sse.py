"""Anthropic Messages SSE (``POST /v1/messages``), as providers.md describes it.

``base_url`` is the root (``http://127.0.0.1:P``), without ``/v1``: the SDK and litellm add it.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import contextmanager

from tests.servers.base import ScriptedServer, sse
from tests.servers.script import Reply

_STOP = {"stop": "end_turn", "length": "max_tokens"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class AnthropicEncoder:
    name = "anthropic"
    path = "/v1/messages"
    base_suffix = ""

    def wants_usage(self, body: dict) -> bool:
        return True  # Anthropic always reports usage

    def opening(self, reply: Reply, body: dict) -> list[bytes]:
        message: dict = {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or reply.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": anthropic_usage(reply, output_tokens=1),
        }
        return [
            sse({"type": "message_start", "message": message}, "message_start"),
            sse(
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            ),
            sse({"type": "ping"}, "ping"),
        ]

    def text(self, reply: Reply, chunk: str) -> bytes:
        return sse(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": chunk}},
            "content_block_delta",
        )

    def closing(self, reply: Reply, body: dict) -> list[bytes]:
        output_tokens = reply.usage[1] if reply.usage else 0
        return [
            sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse(
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": _STOP.get(reply.finish_reason, reply.finish_reason),
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": output_tokens},
                },
                "message_delta",
            ),
            sse({"type": "message_stop"}, "message_stop"),
        ]

    def error_frame(self, reply: Reply) -> bytes:
        error = {"type": reply.error_type or "overloaded_error", "message": reply.error_message}
        return sse({"type": "error", "error": error}, "error")

    def malformed(self, reply: Reply) -> bytes:
        return b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_de\n\n'

    def http_error_body(self, reply: Reply) -> dict:
        error_type = reply.error_type or _ERROR_TYPES.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": error_type, "message": reply.error_message}}


def anthropic_usage(reply: Reply, output_tokens: int | None = None) -> dict:
    """Messages ``usage``: ``input_tokens`` EXCLUDES the cache reads and writes, reported apart."""
    total, output = reply.usage if reply.usage else (0, 0)
    read, write = reply.cache_read, reply.cache_write
    usage: dict = {
        "input_tokens": total - (read or 0) - (write or 0),
        "output_tokens": output if output_tokens is None else output_tokens,
    }
    if read is not None or write is not None:
        usage["cache_creation_input_tokens"] = write or 0
        usage["cache_read_input_tokens"] = read or 0
    return usage


class AnthropicServer(ScriptedServer):
    def __init__(self, replies: Iterable[Reply] = (), *, port: int = 0):
        super().__init__(AnthropicEncoder(), replies, port=port)


@contextmanager
def serve(replies: Iterable[Reply] | Reply = (), *, port: int = 0):
    """Run an Anthropic-protocol server for the block; yields it (``.base_url`` has no ``/v1``)."""
    if isinstance(replies, Reply):
        replies = [replies]
    with AnthropicServer(replies, port=port) as server:
        yield server
