"""Ask a self-hosted OpenAI-compatible server for its context window, once per process.

A price table cannot know a local server's window: it is a launch flag (vLLM ``--max-model-len``,
llama.cpp ``--ctx-size``). The servers that report it:

* vLLM: ``GET {base_url}/models`` lists ``{"id": <model>, "max_model_len": 8192, …}``;
* llama.cpp ``llama-server``: ``GET {root}/props`` has ``default_generation_settings.n_ctx``
  (older versions a top-level ``n_ctx``), ``root`` being ``base_url`` without ``/v1``.

Ollama's ``/v1/models`` has no window, so it stays unknown, as does any server that does not
answer within :data:`TIMEOUT_S`: a window is never guessed. Each answer, known or not, is kept
for the process (:func:`forget` drops them), so a run, a batch of cells or the TUI's estimate
after every change asks each server once. Two first asks racing in two threads may both ask.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from core.providers.tls import ssl_context

#: For both questions together: a server this slow is not worth waiting for before every run.
TIMEOUT_S = 3.0


@dataclass(frozen=True)
class ServerWindow:
    """What a server said about one model's window."""

    #: Tokens, or None when the server did not report one.
    window: int | None
    #: The base URL as shown: no userinfo, query or fragment (they can carry credentials).
    server: str
    #: Where the window was read ("max_model_len in /v1/models"), or why there is none.
    detail: str

    @property
    def source(self) -> str:
        """``http://host:8000/v1, max_model_len in /v1/models``: where a refusal's window came from."""
        return f"{self.server}, {self.detail}"

    @property
    def note(self) -> str:
        """The line for the plan's notes."""
        if self.window is None:
            return f"window unknown: {self.server} did not report one ({self.detail}); the prompt was not checked against it"
        return f"window {self.window:,} tokens, reported by {self.server} ({self.detail})"


_ANSWERS: dict[tuple[str, str], ServerWindow] = {}
_LOCK = threading.Lock()


async def server_window(
    base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = TIMEOUT_S
) -> ServerWindow:
    """The window the server at ``base_url`` reports for ``model``; never raises (a failure is an
    unknown window whose ``detail`` says what happened). ``api_key`` is sent as a Bearer token."""
    key = (base_url, model)
    with _LOCK:
        known = _ANSWERS.get(key)
    if known is not None:
        return known
    answer = await _ask(base_url, model, api_key, timeout_s)  # a cancelled ask is not remembered
    with _LOCK:
        return _ANSWERS.setdefault(key, answer)


def remembered(base_url: str, model: str) -> ServerWindow | None:
    """The answer already had for this server and model, without asking."""
    with _LOCK:
        return _ANSWERS.get((base_url, model))


def forget() -> None:
    """Drop every remembered answer: the next run asks again (a restarted server, tests)."""
    with _LOCK:
        _ANSWERS.clear()


def shown_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


async def _ask(base_url: str, model: str, api_key: str | None, timeout_s: float) -> ServerWindow:
    server = shown_url(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    models_url = base_url.rstrip("/") + "/models"
    root = base_url.rstrip("/").removesuffix("/v1")
    props_url = root + "/props"
    said: list[str] = []
    try:
        async with (
            asyncio.timeout(timeout_s),
            httpx.AsyncClient(timeout=timeout_s, headers=headers, verify=ssl_context()) as client,
        ):
            doc, how = await _get_json(client, models_url)
            window, how = _from_models(doc, model) if doc is not None else (None, how)
            if window is not None:
                return ServerWindow(window, server, f"max_model_len in {_path(models_url)}")
            said.append(f"{_path(models_url)} {how}")
            doc, how = await _get_json(client, props_url)
            window, how = _from_props(doc) if doc is not None else (None, how)
            if window is not None:
                return ServerWindow(window, server, f"n_ctx in {_path(props_url)}")
            said.append(f"{_path(props_url)} {how}")
    except (TimeoutError, httpx.TimeoutException):
        said.append(f"no answer within {timeout_s:g} s")
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
        # refused, reset, a bad URL, an unreadable CA file: the type says enough; the text may carry the URL
        said.append(f"could not be reached: {type(exc).__name__}")
    return ServerWindow(None, server, ", ".join(said))


async def _get_json(client: httpx.AsyncClient, url: str) -> tuple[object | None, str]:
    """The JSON body of a 200 answer, else None and what came instead (never the body's text)."""
    response = await client.get(url)
    if response.status_code in (404, 405):
        return None, "absent"
    if response.status_code != 200:
        return None, f"answered HTTP {response.status_code}"
    try:
        return response.json(), ""
    except ValueError:
        return None, "is not JSON"


def _from_models(doc: object, model: str) -> tuple[int | None, str]:
    entries = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        return None, "has no model list"
    mine = [e for e in entries if isinstance(e, dict) and e.get("id") == model]
    if not mine:
        return None, "does not list this model"  # another model's window is not this one's
    window = _tokens(mine[0].get("max_model_len"))
    return window, "" if window else "has no max_model_len"


def _from_props(doc: object) -> tuple[int | None, str]:
    if not isinstance(doc, dict):
        return None, "has no n_ctx"
    settings = doc.get("default_generation_settings")
    window = _tokens(settings.get("n_ctx")) if isinstance(settings, dict) else None
    window = window or _tokens(doc.get("n_ctx"))
    return window, "" if window else "has no n_ctx"


def _tokens(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _path(url: str) -> str:
    return urlsplit(url).path
