"""002: the embedding cache (``core.ports.EmbeddingCache``): one vector per (model, text sha256)."""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
CREATE TABLE embeddings (
    model       TEXT NOT NULL,                     -- embedding model name
    text_sha256 TEXT NOT NULL,                     -- hex sha256 of the UTF-8 text
    vector      BLOB NOT NULL,                     -- bytes as given (e.g. float32 little-endian)
    created_at  TEXT NOT NULL,
    PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID;
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
