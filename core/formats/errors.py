"""The one error every importer raises, and its translation from pydantic's errors.

Messages name the file, the record and the field path, then what was expected, e.g.
``alex.json: sessions[3].turns[1].role: expected 'user', 'assistant' or 'system', got 'usr'``.
"""

from __future__ import annotations

import re

from pydantic import ValidationError
from pydantic_core import ErrorDetails

#: A model validator's message that starts with the field it is about: "sessions[2].id: …".
_HEAD = re.compile(r"^((?:\[\d+\]|[A-Za-z_]\w*)(?:\.[A-Za-z_]\w*|\[\d+\])*): (.+)$", re.S)


class FormatError(Exception):
    """Input that cannot become the model. ``str()`` is the message shown to the operator."""

    def __init__(self, source: str, message: str, *, record: str | None = None, path: str | None = None):
        self.source = source
        self.record = record
        self.path = path
        self.detail = message
        where = ": ".join(p for p in (source, record, path) if p)
        super().__init__(f"{where}: {message}" if where else message)


def join_path(loc: tuple | list) -> str:
    """``("sessions", 3, "turns", 1, "role")`` -> ``sessions[3].turns[1].role``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def describe(error: ErrorDetails) -> str:
    """One pydantic error dict -> 'expected …, got …' in plain words."""
    kind = error.get("type", "")
    given = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field (check its spelling against `prefscope schema`)"
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}, got {_show(given)}"
    if kind in ("value_error", "assertion_error"):
        return str(error.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    msg = str(error.get("msg", "invalid value"))
    if msg.startswith("Input should be "):
        msg = "expected " + msg.removeprefix("Input should be ")
    elif msg.startswith(("String should have ", "List should have ")):
        msg = "expected " + msg.split(" should have ", 1)[1]
    return f"{msg}, got {_show(given)}"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def from_validation(source: str, err: ValidationError, *, record: str | None = None, prefix: str = "") -> FormatError:
    """The first error of a ValidationError as a FormatError (plus a count of the others)."""
    errors = err.errors()
    first = errors[0]
    path = join_path(first.get("loc", ()))
    if prefix:
        path = f"{prefix}.{path}" if path and not path.startswith("[") else f"{prefix}{path}"
    message = describe(first)
    # Model-level validators name the field inside their message ("sessions[2].id: …"): move it
    # into the path so the message reads file: record: full.path: what was wrong.
    head = _HEAD.match(message) if first.get("type") in ("value_error", "assertion_error") else None
    if head:
        field, message = head.groups()
        path = field if not path else (f"{path}{field}" if field.startswith("[") else f"{path}.{field}")
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''} in this record)"
    return FormatError(source, message, record=record, path=path or None)
