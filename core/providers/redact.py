"""Removing secrets from text before it reaches the database, a log or the screen.

Servers echo what they were sent (an ``Authorization`` header in a 401 body, a key in a URL), and
error messages carry base URLs; :func:`redact` is applied to every provider error, every stored
error and every stored spec or base URL. It removes the values of the key variables in the
environment (whatever a provider or endpoint reads: ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``,
``*_SECRET``) and anything shaped like a credential, whichever variable it came from.
"""

from __future__ import annotations

import os
import re
from typing import overload

MASK = "[redacted]"

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


def _env_secrets() -> list[str]:
    # Read at call time: keys come from the environment when a call is made.
    values = {
        v
        for k, v in os.environ.items()
        if (k in _KEY_ENVS or _SECRET_ENV.search(k)) and len(v) >= _MIN_SECRET and v != "not-needed"
    }
    return sorted(values, key=len, reverse=True)  # a longer key containing a shorter one goes first


@overload
def redact(text: str) -> str: ...
@overload
def redact(text: None) -> None: ...
def redact(text: str | None) -> str | None:
    """``text`` with every secret replaced by ``[redacted]`` (None stays None)."""
    if not text:
        return text
    for secret in _env_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
