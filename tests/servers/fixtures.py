"""Pytest fixtures for the scripted protocol servers; import them into any conftest::

    from tests.servers.fixtures import anthropic_server, openai_server  # noqa: F401

Each test gets a fresh server on 127.0.0.1 (port chosen by the OS), scripted with
``server.script(Reply(...), ...)`` and inspected through ``server.requests`` / ``server.log``.
"""

from __future__ import annotations

import pytest

from tests.servers.anthropic_sse import AnthropicServer
from tests.servers.openai_sse import OpenAIServer


@pytest.fixture
def openai_server():
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def anthropic_server():
    with AnthropicServer() as server:
        yield server
