"""A run's prompt steps, each distinct message stored once.

Prompts of one user share almost all their messages (the same sessions and filler, in another
order or subset), so ``prompt_messages`` holds each distinct message once, keyed by the sha256 of
its JSON (:func:`message_key`), and a ``prompts`` row names its messages in order as a JSON array
of their ids (``message_ids``; SQL can walk it with ``json_each``). Reading a step back gives the
same roles, contents and order that were written. ``prompts.sha256`` is still the digest of the
step's full message JSON, as before the messages were shared.

Every write and read of prompt messages goes through this module (schema: migration 011).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from json.encoder import encode_basestring

from sqlite_utils import Database

from core.plan import Message, PromptStep

#: The message fields ``prompt_messages`` has a column for, in ``Message`` order; a field added to
#: ``Message`` needs a column (and a migration) before it can be stored (a test holds them equal).
FIELDS = ("role", "content")

_CHUNK = 500  # ids per ``IN (…)``: under SQLite's bound-parameter limit
#: A step's protocol limits and prefill: no ``prompts`` column holds them, so the run's plan JSON
#: keeps them under this key (one object per step, only the fields set), and reading restores them.
STEP_LIMITS = "step_limits"
_LIMIT_FIELDS = ("max_tokens", "temperature", "prefill")


def step_limits(steps: list[PromptStep]) -> list[dict]:
    """Per step, the limits set (``[]`` when no step has any: plans without them store as before)."""
    limits = [{k: getattr(s, k) for k in _LIMIT_FIELDS if getattr(s, k) is not None} for s in steps]
    return limits if any(limits) else []


def with_step_limits(steps: list[PromptStep], limits: list[dict]) -> list[PromptStep]:
    """The stored steps with their limits back (what :func:`step_limits` kept)."""
    return [s.model_copy(update=lim) if lim else s for s, lim in zip(steps, [*limits, *[{}] * len(steps)])]


def message_key(message: Message) -> bytes:
    """A message's identity: the sha256 of its JSON exactly as a step's JSON list holds it (fields in
    ``Message`` order, ``json.dumps`` defaults, UTF-8), so one encoding serves both digests."""
    return hashlib.sha256(_encode(message)).digest()


def insert_prompt_step(db: Database, run_id: str, step_index: int, step: PromptStep) -> str:
    """Store one step of a run's prompt plan (its ``prompts`` row and the messages not stored yet);
    returns the step's ``sha256``.

    Call it inside the write that stores the run: a rolled-back write then leaves no message behind,
    and no id is remembered between calls, since a message another write added may be rolled back.
    """
    encoded = [_encode(m) for m in step.messages]
    sha = _list_sha256(encoded)
    db.conn.execute(
        "INSERT INTO prompts (run_id, step_index, step, purpose, message_ids, tokens, sha256) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (run_id, step_index, step.name, step.purpose, _pack(_store(db, step.messages, encoded)), step.tokens, sha),
    )
    return sha


def load_prompt_steps(db: Database, run_id: str) -> list[PromptStep]:
    """The stored steps of a run, in order (name, purpose, tokens and messages)."""
    rows = db.execute(
        "SELECT step, purpose, tokens, message_ids FROM prompts WHERE run_id = ? ORDER BY step_index", [run_id]
    ).fetchall()
    lists = [_unpack(r[3]) for r in rows]
    by_id = _messages_by_id(db, {i for ids in lists for i in ids})
    return [
        PromptStep(name=r[0], purpose=r[1], tokens=r[2], messages=[Message.model_validate(by_id[i]) for i in ids])
        for r, ids in zip(rows, lists)
    ]


def step_messages(db: Database, run_id: str, step_index: int) -> list[Message]:
    """The messages of one stored step, in order (``[]`` for a step that does not exist)."""
    row = db.execute(
        "SELECT message_ids FROM prompts WHERE run_id = ? AND step_index = ?", [run_id, step_index]
    ).fetchone()
    if row is None:
        return []
    ids = _unpack(row[0])
    by_id = _messages_by_id(db, set(ids))
    return [Message.model_validate(by_id[i]) for i in ids]


def _messages_by_id(db: Database, ids: Iterable[int]) -> dict[int, dict[str, str]]:
    # Fields, not Message objects: each position gets a Message of its own, even a repeated one.
    wanted = list(ids)
    out: dict[int, dict[str, str]] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for id_, role, content in db.execute(
            f"SELECT id, role, content FROM prompt_messages WHERE id IN ({marks})", chunk
        ):
            out[id_] = {"role": role, "content": content}
    missing = set(wanted) - out.keys()
    if missing:
        raise LookupError(f"prompt messages {sorted(missing)[:5]} are missing from the database")
    return out


def _encode(message: Message) -> bytes:
    # ``json.dumps(message.model_dump(), ensure_ascii=False)`` for the FIELDS, written out: the dump
    # and the generic encoder would double the time a run's prompt takes to store.
    return (
        '{"role": ' + encode_basestring(message.role) + ', "content": ' + encode_basestring(message.content) + "}"
    ).encode()


def _list_sha256(encoded: list[bytes]) -> str:
    """sha256 of ``json.dumps(list)`` from its items' encodings (", " between them, as json does)."""
    digest = hashlib.sha256(b"[")
    for i, item in enumerate(encoded):
        if i:
            digest.update(b", ")
        digest.update(item)
    digest.update(b"]")
    return digest.hexdigest()


def _store(db: Database, messages: list[Message], encoded: list[bytes]) -> list[int]:
    keys = [hashlib.sha256(e).digest() for e in encoded]
    ids = _ids_of(db, set(keys))
    for key, m in zip(keys, messages):
        if key not in ids:
            (ids[key],) = db.conn.execute(
                "INSERT INTO prompt_messages (sha256, role, content) VALUES (?, ?, ?) RETURNING id",
                (key, m.role, m.content),
            ).fetchone()
    return [ids[k] for k in keys]


def _ids_of(db: Database, keys: set[bytes]) -> dict[bytes, int]:
    wanted = list(keys)
    out: dict[bytes, int] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        out.update(db.execute(f"SELECT sha256, id FROM prompt_messages WHERE sha256 IN ({marks})", chunk))
    return out


def _pack(ids: list[int]) -> str:
    return json.dumps(ids, separators=(",", ":"))


def _unpack(packed: str) -> list[int]:
    return json.loads(packed)
