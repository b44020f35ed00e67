"""Loopback servers speaking real provider protocols, for tests and bench scripts.

- :mod:`tests.servers.openai_sse` – OpenAI Chat Completions SSE; ``serve(replies)`` context manager.
- :mod:`tests.servers.anthropic_sse` – Anthropic Messages SSE; ``serve(replies)`` context manager.
- :mod:`tests.servers.script` – :class:`Reply`, what the server does with one request (text, pace,
  usage and prompt-cache counts, HTTP error + retry-after, or a fault: ``error_frame``, ``drop``,
  ``stall``, ``malformed``).
- :mod:`tests.servers.batch_openai` – :class:`OpenAIBatchServer`: the OpenAI server plus files and
  the Batch API (JSONL input file → output / error files).
- :mod:`tests.servers.batch_anthropic` – :class:`AnthropicBatchServer`: the Anthropic server plus
  Message Batches (results as JSONL).
- :mod:`tests.servers.batch_jobs` – how batch jobs progress as they are polled, and a test's
  controls (``responder``, ``polls_to_finish``, ``hold``/``release``, ``expire``, ``submitted``).
- :mod:`tests.servers.fixtures` – ``openai_server`` / ``anthropic_server`` pytest fixtures.
"""

from tests.servers.anthropic_sse import AnthropicServer
from tests.servers.batch_anthropic import AnthropicBatchServer
from tests.servers.batch_jobs import echo_reply
from tests.servers.batch_openai import OpenAIBatchServer
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply

__all__ = ["AnthropicBatchServer", "AnthropicServer", "OpenAIBatchServer", "OpenAIServer", "Reply", "echo_reply"]
