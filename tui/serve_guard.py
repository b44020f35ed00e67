"""`prefscope serve` behind a guard: a token off loopback, and websockets from our own page only.

A served workbench is the whole program: it reads the API keys in the server's environment (and
spends them), shows every stored run and can delete data. So off loopback a token is required (a
generated one is printed with the URL, as Jupyter does); every request must carry it (``?token=``
once, then a cookie the page sets). The websocket that drives the app must come from a page this
server served (``Origin`` = ``Host``), and without a token the ``Host`` must be a loopback name,
so a web page on another site cannot drive a local workbench (cross-site websockets, DNS
rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web
from textual_serve.server import Server

COOKIE = "prefscope_token"
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """127.x, ::1 or localhost (a name or an address, with or without [brackets])."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def serve_token(host: str, given: str | None) -> tuple[str | None, bool]:
    """The token to require, and whether it was generated: off loopback there is always one."""
    if given:
        return given, False
    if is_loopback(host):
        return None, False
    return secrets.token_urlsafe(24), True


def _hostname(netloc: str) -> str:
    return urlsplit(f"//{netloc}").hostname or ""


class GuardedServer(Server):
    """textual-serve's server with a token check and an Origin check in front of every route."""

    def __init__(self, command: str, *, host: str, port: int, title: str, token: str | None):
        super().__init__(command, host=host, port=port, title=title)
        self.token = token

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    async def on_startup(self, app: web.Application) -> None:
        pass  # the CLI prints the URL (with its token) itself

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if self.token is None and not is_loopback(_hostname(request.host)):
            return web.Response(status=403, text="forbidden: this server answers only on loopback names\n")
        from_query = request.query.get("token")
        if self.token is not None:
            given = from_query or request.cookies.get(COOKIE) or ""
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return web.Response(status=401, text="unauthorized: open the URL with ?token= printed by serve\n")
        if request.path == "/ws":
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
                return web.Response(status=403, text="forbidden: cross-origin websocket\n")
        if request.path == "/":
            # Absolute URLs in the page follow the address the browser used (not 0.0.0.0).
            self.public_url = f"{request.scheme}://{request.host}"
        response = await handler(request)
        if from_query and self.token is not None and request.path != "/ws":
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response
