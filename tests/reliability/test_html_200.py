"""A server that answers a streaming model request with ``200 text/html`` (a captive portal, a
proxy's sign-in page, a base_url pointing at a website) is reported as what it is, an HTML page
where a model stream was expected, naming the server and the base_url to check; not as a stream
that "ended without its finish signal", and never as an empty ``ok`` answer (issue 34, item 9).

The real SDKs (openai, anthropic, litellm) read such a body as an SSE stream without a single
event. Each `prefscope run` is a child process against a real loopback HTTP server."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import REPO
from tests.tui.conftest import child_env

PAGE = b"<!DOCTYPE html><html><head><title>Sign in to Hotel WiFi</title></head><body>Log in</body></html>"


class PortalServer:
    """Answers every request with 200 and an HTML sign-in page; counts the model calls (POSTs; a
    GET is the context-window question a run asks a base_url server first)."""

    def __init__(self) -> None:
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                server.requests += 1
                self.do_GET()

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> PortalServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


MODELS = {
    "openai": ("openai:test-model", "/v1"),
    "anthropic": ("anthropic:test-model", ""),
    "litellm": ("litellm:openai/test-model", "/v1"),
}


@pytest.mark.parametrize("protocol", list(MODELS))
def test_an_html_page_with_status_200_is_named_as_such(tmp_path, protocol):
    model, suffix = MODELS[protocol]
    db = tmp_path / "h.db"
    with PortalServer() as portal:
        base_url = portal.url + suffix
        done = subprocess.run(
            [sys.executable, "-m", "tui.cli", "--db", str(db), "run", "maya", "p1-open", "--plain"]
            + ["--model", model, "--base-url", f"{model}={base_url}"],
            env=child_env(tmp_path / "home", OPENAI_API_KEY="k", ANTHROPIC_API_KEY="k"),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        asked = portal.requests
    said = done.stdout + done.stderr
    assert done.returncode == 1, said  # every model failed
    assert asked == 1, f"an HTML page is not worth a retry: {asked} requests"
    status, text, error = sqlite3.connect(db).execute("SELECT status, text, error FROM responses").fetchone()
    assert status == "error" and not text, (status, text, error)
    for shown in (error, said):
        assert "HTML page" in shown and "base_url" in shown and "127.0.0.1" in shown, shown
        assert "finish signal" not in shown, shown
