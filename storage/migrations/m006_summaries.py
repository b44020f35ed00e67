"""006: model-written session summaries (CUPID's summaries setting), cached by (model, session hash)."""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
CREATE TABLE summaries (
    model        TEXT NOT NULL,                  -- the model that wrote it (provider:model)
    session_hash TEXT NOT NULL,                  -- sha256 of the session's turns
    summary      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (model, session_hash)
) WITHOUT ROWID;
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
