"""001: imported histories - users, filler pools, sessions, turns (+ FTS), preferences, queries, attributes.

Filler sessions live in ``sessions`` next to user sessions, owned by a pool instead of a user
(exactly one of ``user_id`` / ``pool_id`` is set). They are the same domain object
(``core.model.Session``), the context builder interleaves both kinds, and one ``turns`` table with
one FTS index then covers every word a model may be shown.

List- and dict-valued fields are JSON text columns (readable as-is in Datasette / DuckDB).
Deleting a user or pool cascades to everything it owns, FTS included (triggers).
"""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
CREATE TABLE users (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL DEFAULT '',
    source           TEXT NOT NULL,
    persona          TEXT NOT NULL DEFAULT '',
    extended_persona TEXT NOT NULL DEFAULT '',
    demographics     TEXT NOT NULL DEFAULT '{}',   -- JSON object
    life_events      TEXT NOT NULL DEFAULT '[]',   -- JSON [{date, event}]
    meta             TEXT NOT NULL DEFAULT '{}',   -- JSON object
    format           TEXT NOT NULL,                -- importer that produced it
    imported_at      TEXT NOT NULL
);

CREATE TABLE filler_pools (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL,
    format      TEXT NOT NULL,
    imported_at TEXT NOT NULL
);

CREATE TABLE sessions (
    pk                    INTEGER PRIMARY KEY,
    user_id               TEXT REFERENCES users(id) ON DELETE CASCADE,
    pool_id               TEXT REFERENCES filler_pools(id) ON DELETE CASCADE,
    id                    TEXT NOT NULL,
    position              INTEGER NOT NULL,        -- order within the owner's history
    date                  TEXT,                    -- ISO date
    kind                  TEXT NOT NULL,
    expression_type       INTEGER,
    preference_ids        TEXT NOT NULL DEFAULT '[]',
    title                 TEXT NOT NULL DEFAULT '',
    context_factor        TEXT,
    contextual_preference TEXT,
    meta                  TEXT NOT NULL DEFAULT '{}',
    n_turns               INTEGER NOT NULL,
    chars                 INTEGER NOT NULL,        -- total characters of its turns
    CHECK ((user_id IS NULL) <> (pool_id IS NULL))
);
CREATE UNIQUE INDEX sessions_user_id ON sessions(user_id, id);
CREATE UNIQUE INDEX sessions_user_position ON sessions(user_id, position);
CREATE UNIQUE INDEX sessions_pool_id ON sessions(pool_id, id);
CREATE UNIQUE INDEX sessions_pool_position ON sessions(pool_id, position);

CREATE TABLE turns (
    pk         INTEGER PRIMARY KEY,
    session_pk INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,                   -- 0-based; turn ref = "<session id>#<idx>"
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    source_id  TEXT
);
CREATE UNIQUE INDEX turns_session_idx ON turns(session_pk, idx);

CREATE TABLE preferences (
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    position     INTEGER NOT NULL,
    text         TEXT NOT NULL,
    topic        TEXT,
    type         TEXT,
    origin       TEXT NOT NULL,
    derived_from TEXT NOT NULL DEFAULT '[]',
    infer_reason TEXT,
    formed       TEXT,                             -- JSON {date, event} or NULL
    evidence     TEXT NOT NULL DEFAULT '{}',       -- JSON {"<expression type>": [session ids]}
    PRIMARY KEY (user_id, id)
);

CREATE TABLE queries (
    user_id           TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    id                TEXT NOT NULL,
    position          INTEGER NOT NULL,
    kind              TEXT NOT NULL,
    text              TEXT NOT NULL,
    preference_id     TEXT,
    query_group       TEXT,                        -- Query.group
    options           TEXT NOT NULL DEFAULT '[]',
    answer            TEXT,
    explanation       TEXT NOT NULL DEFAULT '',
    evidence_sessions TEXT NOT NULL DEFAULT '[]',
    evidence_turns    TEXT NOT NULL DEFAULT '[]',
    gold_preference   TEXT,
    checklist         TEXT NOT NULL DEFAULT '[]',
    context_factor    TEXT,
    instance_type     TEXT,
    meta              TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (user_id, id),
    FOREIGN KEY (user_id, preference_id) REFERENCES preferences(user_id, id) ON DELETE CASCADE
);
CREATE INDEX queries_preference ON queries(user_id, preference_id);

CREATE TABLE attributes (
    user_id        TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    id             TEXT NOT NULL,
    position       INTEGER NOT NULL,
    text           TEXT NOT NULL,
    reasoning      TEXT NOT NULL DEFAULT '',
    confidence     REAL NOT NULL,
    evidence_turns TEXT NOT NULL DEFAULT '[]',
    source         TEXT NOT NULL,
    PRIMARY KEY (user_id, id)
);
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
    db.table("turns").enable_fts(["content"], fts_version="FTS5", create_triggers=True, tokenize="porter")
