"""`prefscope serve` is guarded: the real server (a subprocess, bound to 127.0.0.1 only) answers
401 without its token and 403 to a websocket from another origin; off loopback the CLI always
requires a token (a generated one is printed). 0.0.0.0 is never bound here: the CLI's decision is
tested with the server's ``serve`` replaced, and the app it built is then served on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from base64 import b64encode
from pathlib import Path

import httpx
import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from tests.waiting import wait_until
from tui.cli import main
from tui.serve_guard import COOKIE, GuardedServer, is_loopback, serve_token

TOKEN = "t0k3n-for-this-test"
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _up(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
    except httpx.TransportError:
        return False
    return True


@pytest.fixture
def served(tmp_path, request):
    """Start `prefscope serve` on 127.0.0.1 (with --token when the test is parametrised so)."""
    port = _free_port()
    args = [sys.executable, "-m", "tui.cli", "--db", str(tmp_path / "w.db"), "serve", "--host", "127.0.0.1"]
    args += ["--port", str(port)] + (["--token", TOKEN] if getattr(request, "param", True) else [])
    proc = subprocess.Popen(args, cwd=ROOT, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _up(base) or proc.poll() is not None, timeout=30, what="prefscope serve to listen")
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


def _ws_headers(base: str, origin: str | None) -> dict[str, str]:
    headers = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": b64encode(os.urandom(16)).decode(),
    }
    if origin:
        headers["Origin"] = origin
    return headers


def test_requests_without_the_token_are_refused(served):
    assert httpx.get(served + "/").status_code == 401
    assert httpx.get(served + "/?token=wrong").status_code == 401
    assert httpx.get(served + "/static/js/textual.js").status_code == 401
    page = httpx.get(served + f"/?token={TOKEN}")
    assert page.status_code == 200 and "textual" in page.text.lower()
    assert page.cookies.get(COOKIE) == TOKEN, "the page sets the cookie its scripts and websocket carry"
    assert httpx.get(served + "/static/js/textual.js", cookies={COOKIE: TOKEN}).status_code == 200


def test_the_websocket_needs_the_token_and_its_own_origin(served):
    ws = served + "/ws"
    same = served
    assert httpx.get(ws, headers=_ws_headers(served, same)).status_code == 401
    foreign = httpx.get(ws, headers=_ws_headers(served, "http://evil.example"), cookies={COOKIE: TOKEN})
    assert foreign.status_code == 403
    other_port = httpx.get(ws, headers=_ws_headers(served, "http://127.0.0.1:1"), cookies={COOKIE: TOKEN})
    assert other_port.status_code == 403
    # The page's own websocket is let through (101 starts the app; closing the client stops it).
    with (
        httpx.Client() as client,
        client.stream("GET", ws, headers=_ws_headers(served, same), cookies={COOKIE: TOKEN}) as r,
    ):
        assert r.status_code == 101


@pytest.mark.parametrize("served", [False], indirect=True)
def test_loopback_without_a_token_works_as_before_but_only_for_loopback_pages(served):
    assert httpx.get(served + "/").status_code == 200
    assert httpx.get(served + "/ws", headers=_ws_headers(served, "http://evil.example")).status_code == 403
    # DNS rebinding: a foreign name resolving to 127.0.0.1 reaches us with its own Host header.
    rebound = httpx.get(served + "/", headers={"Host": "evil.example:80"})
    assert rebound.status_code == 403


def test_the_token_decision():
    for host in ("127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]"):
        assert is_loopback(host) and serve_token(host, None) == (None, False), host
    for host in ("0.0.0.0", "::", "192.168.1.20", "example.org"):
        token, generated = serve_token(host, None)
        assert not is_loopback(host) and generated and token and len(token) >= 24, host
    assert serve_token("0.0.0.0", "mine") == ("mine", False)
    assert serve_token("127.0.0.1", "mine") == ("mine", False), "a token works on loopback too"


async def test_serve_off_loopback_prints_a_generated_token_and_requires_it(monkeypatch, tmp_path):
    started: list[GuardedServer] = []
    monkeypatch.setattr(GuardedServer, "serve", lambda self, debug=False: started.append(self))
    monkeypatch.delenv("PREFSCOPE_SERVE_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "w.db"), "serve", "--host", "0.0.0.0"])
    assert result.exit_code == 0, result.output
    (server,) = started
    assert server.token and f"http://0.0.0.0:8000/?token={server.token}" in result.output
    assert "API keys" in result.output, "says what serving exposes"
    # The app the CLI built, served on loopback: 401 without the token.
    async with TestClient(TestServer(await server._make_app(), host="127.0.0.1")) as client:
        assert (await client.get("/")).status == 401
        assert (await client.get(f"/?token={server.token}")).status == 200
