"""Shared test setup: no network beyond loopback, no writes outside tmp, offline libraries."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

# Offline settings for litellm / huggingface, before anything imports them (providers.md).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
# The exported embedding graph is shared by every test (each test gets its own XDG_CACHE_HOME):
# the folder `make install` fills, unless a test names its own.
os.environ.setdefault(
    "PREFSCOPE_EMBEDDER_CACHE",
    str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "prefscope" / "embedders"),
)

# pytest-xdist's workers inherit COLUMNS=80 / LINES=24, and a rich console made at import keeps
# the width it finds then: without them every test sees the same width, however it is run.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
DATASETS = SHARED / "datasets"
SAMPLE_DATA = REPO / "sample_data"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_address(sock: socket.socket, address) -> None:
    if sock.family == socket.AF_UNIX:
        return
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost",):
        return
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise RuntimeError(f"test tried to reach {host!r}: only loopback is allowed in tests") from None
    if not ip.is_loopback:
        raise RuntimeError(f"test tried to reach {host}: only loopback is allowed in tests")


def _guarded_connect(self, address):
    _check_address(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check_address(self, address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def _network_guard():
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex


@pytest.fixture(autouse=True)
def _isolated_paths(tmp_path, monkeypatch):
    """Every test gets its own home, data/config/cache dirs and no provider keys from the real
    environment, so a developer's own database, config or cache never changes what a test sees."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("PREFSCOPE_DB", str(tmp_path / "prefscope.db"))
    # The TUI's background embedding keeps a core busy for seconds: on only where a test asks.
    monkeypatch.setenv("PREFSCOPE_EMBED_AHEAD", "false")
    monkeypatch.delenv("PREFSCOPE_CONFIG", raising=False)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    # Process-wide memories: a server's window (an OS port is reused by a later test's server) and
    # which prompt prefixes were sent (the prompt-cache policy counts them).
    from core.providers import server_window
    from core.providers.prompt_cache import USES

    server_window.forget()
    USES.clear()


def dataset(*parts: str) -> Path:
    """A path under ../shared/datasets, or skip the test cleanly when it is absent."""
    path = DATASETS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared dataset not available: {path}")
    return path


REFERENCE = SHARED / "reference"


def reference(*parts: str) -> Path:
    """A path under ../shared/reference (official prompts and protocols), or skip cleanly when absent."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared reference not available: {path}")
    return path


@pytest.fixture(scope="session")
def priya():
    """A sample user (RealPref-style) for judge and analysis tests."""
    from core.formats.native import load_file

    return load_file(REPO / "sample_data" / "users" / "priya.json").bundles[0]


@pytest.fixture(scope="module")
def maya():
    """Maya (RealPref-style: open, MCQ and true/false queries per preference), loaded once per module."""
    from core.formats.native import load_file

    return load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]


@pytest.fixture(scope="module")
def dana():
    """Dana (CUPID-style: checklists, context factors, no MCQ), loaded once per module."""
    from core.formats.native import load_file

    return load_file(SAMPLE_DATA / "users" / "dana.json").bundles[0]
