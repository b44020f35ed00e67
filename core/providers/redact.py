"""Removing secrets from text before it reaches the database, a log or the screen.

Servers echo what they were sent (an ``Authorization`` header in a 401 body, a key in a URL), and
error messages carry base URLs; :func:`redact` is applied to every provider error, every stored
error and every stored spec or base URL. It removes the values of the key variables in the
environment and anything shaped like a credential, whichever variable it came from.

Which variables hold keys: every name matching ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_PASSWORD``, and – whatever its name – every ``api_key_env`` the configuration names (endpoints,
router deployments; registered by :class:`core.settings.Settings` when the config is read) or a
provider is built with (:func:`remember_key_env`). A value is also caught as a copy: base64
(standard or URL-safe, padded or not, at any alignment inside a longer base64 text, as in a
``Basic`` header) and URL-encoded.

Answers: a model may repeat a key it was shown (or that a server injects). :class:`StreamRedactor`
masks key values (not credential *shapes*: an answer may legitimately discuss ``Authorization:``
headers) in the streamed text before anyone sees it – it holds back a tail that could be the start
of a key split across chunks. A masked answer carries :data:`ANSWER_MASK` where the key was, and
the recorder notes it on the stored response.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import urllib.parse
from collections.abc import Callable
from typing import overload

from core.settings import configured_key_envs

MASK = "[redacted]"
#: What replaces a key inside a model's answer (distinct, so the stored response can be noted).
ANSWER_MASK = "[redacted secret]"

#: Environment variables whose values are secrets (the providers' ``api_key_env`` all match).
_SECRET_ENV = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
#: Shorter values are too likely to occur in ordinary text to be replaced everywhere.
_MIN_SECRET = 8

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "Authorization: Bearer x", "authorization": "Basic x", x-api-key: x, api-key=x (headers, JSON, dumps)
    (
        re.compile(
            r"""(?P<name>\b(?:proxy-)?authorization|\bx-api-key|\bapi[-_]?key)(?P<sep>["']?\s*[:=]\s*["']?)"""
            r"""(?:(?:Bearer|Basic|Token)\s+)?[^\s"',;}&]+""",
            re.IGNORECASE,
        ),
        rf"\g<name>\g<sep>{MASK}",
    ),
    (re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE), rf"\1 {MASK}"),
    # sk-…, sk-ant-…, sk-proj-… and similar vendor keys
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{8,}"), MASK),
    # URL userinfo: scheme://user:pass@host → scheme://host
    (re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@\"']+@"), r"\g<scheme>"),
    # key-like query parameters
    (
        re.compile(
            r"(?P<name>[?&](?:api[-_]?key|key|token|access[-_]?token|secret|password|sig|signature|code)=)"
            r"[^&\s\"'#]+",
            re.IGNORECASE,
        ),
        rf"\g<name>{MASK}",
    ),
)


#: Key variables named in the configuration (an endpoint's ``api_key_env`` may be any name).
_KEY_ENVS: set[str] = set()


def remember_key_env(name: str | None) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on."""
    if name:
        _KEY_ENVS.add(name)


def _key_env_names() -> set[str]:
    return _KEY_ENVS | configured_key_envs()


def _env_secrets(environ: dict[str, str] | None = None) -> list[str]:
    # Read at call time: keys come from the environment when a call is made.
    names = _key_env_names()
    env = os.environ if environ is None else environ
    values = {
        v
        for k, v in env.items()
        if (k in names or _SECRET_ENV.search(k)) and len(v) >= _MIN_SECRET and v != "not-needed"
    }
    return sorted(values, key=len, reverse=True)  # a longer key containing a shorter one goes first


def _base64_cores(raw: bytes) -> set[str]:
    """The part of ``raw``'s base64 that is the same wherever ``raw`` sits in a longer encoded text:
    for each of the three alignments, the characters that depend on ``raw``'s bytes alone."""
    out = set()
    for offset, skip in ((0, 0), (1, 2), (2, 3)):
        bits = (offset + len(raw)) * 8
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            core = encode(b"\0" * offset + raw).decode()[skip : bits // 6]
            if len(core) >= _MIN_SECRET:
                out.add(core)
    return out


def _url_copies(value: str) -> set[str]:
    out = set()
    for quoted in (
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote(value),
        urllib.parse.quote_plus(value, safe=""),
        urllib.parse.quote_plus(value),
    ):
        out.add(quoted)
        out.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quoted))
    return out


@functools.lru_cache(maxsize=64)
def _copies(secret: str) -> tuple[str, ...]:
    """The secret and its encoded copies, longest first."""
    found = {secret} | _base64_cores(secret.encode()) | _url_copies(secret)
    return tuple(sorted(found, key=len, reverse=True))


def secret_needles(environ: dict[str, str] | None = None) -> list[str]:
    """Every key value in the environment (``environ``, default ``os.environ``) that a variable
    known to hold a key carries, with its encoded copies, longest first: what any masking searches for."""
    needles = {c for secret in _env_secrets(environ) for c in _copies(secret)}
    return sorted(needles, key=len, reverse=True)


_needles = secret_needles


def _mask_values(text: str, needles: list[str], mask: str) -> str:
    for needle in needles:
        if needle in text:
            text = text.replace(needle, mask)
    return text


def redact_answer(text: str) -> str:
    """An answer with every key value (and encoded copy) replaced by :data:`ANSWER_MASK`."""
    return _mask_values(text, _needles(), ANSWER_MASK) if text else text


def answer_redactor() -> Callable[[str], str]:
    """:func:`redact_answer` for many texts at once (a response's chunks): the keys are read from
    the environment once, not per text."""
    needles = _needles()
    if not needles:
        return lambda text: text
    return lambda text: _mask_values(text, needles, ANSWER_MASK) if text else text


class StreamRedactor:
    """Masks key values in streamed text, chunk by chunk: ``feed`` returns what may be shown now,
    holding back a tail that could be the beginning of a key; ``flush`` returns the rest at the end.
    The keys are those in the environment when it is made (when the call starts)."""

    def __init__(self) -> None:
        self._needles = _needles()
        self._held = ""
        #: How many keys (or copies) were masked so far.
        self.masked = 0

    def feed(self, text: str) -> str:
        if not self._needles:
            return text
        text = self._held + text
        for needle in self._needles:
            if needle in text:
                self.masked += text.count(needle)
                text = text.replace(needle, ANSWER_MASK)
        keep = self._partial_tail(text)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held

    def _partial_tail(self, text: str) -> int:
        """Length of the longest end of ``text`` that some key starts with. Per chunk, so it only
        tries the places in the tail where a key's first character stands."""
        longest = 0
        for needle in self._needles:
            tail = text[-(len(needle) - 1) :] if len(needle) > 1 else ""
            at = tail.find(needle[0])
            while at != -1 and len(tail) - at > longest:
                if needle.startswith(tail[at:]):
                    longest = len(tail) - at
                    break
                at = tail.find(needle[0], at + 1)
        return longest


@overload
def redact(text: str) -> str: ...
@overload
def redact(text: None) -> None: ...
def redact(text: str | None) -> str | None:
    """``text`` with every secret replaced by ``[redacted]`` (None stays None)."""
    if not text:
        return text
    text = _mask_values(text, _needles(), MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
