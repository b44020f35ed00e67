"""Loopback servers speaking real provider streaming protocols, for tests and bench scripts.

- :mod:`tests.servers.openai_sse` – OpenAI Chat Completions SSE; ``serve(replies)`` context manager.
- :mod:`tests.servers.anthropic_sse` – Anthropic Messages SSE; ``serve(replies)`` context manager.
- :mod:`tests.servers.script` – :class:`Reply`, what the server does with one request (text, pace,
  usage, HTTP error + retry-after, or a fault: ``error_frame``, ``drop``, ``stall``, ``malformed``).
- :mod:`tests.servers.fixtures` – ``openai_server`` / ``anthropic_server`` pytest fixtures.
"""

from tests.servers.anthropic_sse import AnthropicServer
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply

__all__ = ["AnthropicServer", "OpenAIServer", "Reply"]
