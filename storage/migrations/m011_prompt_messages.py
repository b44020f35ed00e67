"""011: each distinct prompt message stored once.

A run's prompt was stored whole (``prompts.messages``, the JSON list of its messages), and prompts
of one user repeat almost all their messages: 1,050 demo runs made a database of ~90 MB, most of
it the same sessions and filler again and again.

- ``prompt_messages``: one row per distinct message, keyed by the sha256 of its JSON exactly as a
  step's JSON list held it (``{"role": …, "content": …}``, ``json.dumps`` defaults, UTF-8; the
  same as ``storage.prompt_messages.message_key``).
- ``prompts`` is rebuilt with ``message_ids`` (a JSON array of ``prompt_messages`` ids, in order)
  in place of ``messages``; every existing row is converted here. ``sha256`` keeps the digest of
  the full message JSON as it was.

The statements run one by one on the migration's transaction (``executescript`` would commit it
first), so a failure leaves the database at 010. The file keeps its size until ``VACUUM``; the
freed pages are reused by later writes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

from sqlite_utils import Database

MESSAGES = """
CREATE TABLE prompt_messages (
    id      INTEGER PRIMARY KEY,
    sha256  BLOB NOT NULL UNIQUE,                -- of its JSON {"role": …, "content": …}
    role    TEXT NOT NULL,
    content TEXT NOT NULL
)"""

PROMPTS = """
CREATE TABLE prompts_011 (
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_index  INTEGER NOT NULL,
    step        TEXT NOT NULL,
    purpose     TEXT NOT NULL DEFAULT '',
    message_ids TEXT NOT NULL,                   -- JSON [prompt_messages.id, …] as planned, in order
    tokens      INTEGER NOT NULL,
    sha256      TEXT NOT NULL,                   -- of the messages' JSON [{role, content}, …]
    PRIMARY KEY (run_id, step_index)
)"""

_FIELDS = {"role", "content"}


def up(db: Database) -> None:
    conn = db.conn
    conn.execute(MESSAGES)
    conn.execute(PROMPTS)
    ids: dict[bytes, int] = {}
    for run_id, step_index, step, purpose, messages, tokens, sha in conn.execute(
        "SELECT run_id, step_index, step, purpose, messages, tokens, sha256 FROM prompts ORDER BY rowid"
    ):
        message_ids = [_message_id(conn, ids, m, run_id, step_index) for m in json.loads(messages)]
        conn.execute(
            "INSERT INTO prompts_011 VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_id, step_index, step, purpose, json.dumps(message_ids, separators=(",", ":")), tokens, sha),
        )
    conn.execute("DROP TABLE prompts")  # nothing references prompts, so nothing cascades
    conn.execute("ALTER TABLE prompts_011 RENAME TO prompts")


def _message_id(conn: sqlite3.Connection, ids: dict[bytes, int], message: object, run_id: str, step: int) -> int:
    if (
        not isinstance(message, dict)
        or set(message) != _FIELDS
        or not all(isinstance(v, str) for v in message.values())
    ):
        # Only {role, content} was ever written; anything else would be lost, so stop instead.
        raise RuntimeError(f"run {run_id} step {step}: a prompt message is not {{role, content}}; not converting")
    # The same encoding as storage.prompt_messages.message_key (a test holds them equal).
    raw = json.dumps({"role": message["role"], "content": message["content"]}, ensure_ascii=False)
    key = hashlib.sha256(raw.encode()).digest()
    if key not in ids:
        (ids[key],) = conn.execute(
            "INSERT INTO prompt_messages (sha256, role, content) VALUES (?, ?, ?) RETURNING id",
            (key, message["role"], message["content"]),
        ).fetchone()
    return ids[key]
