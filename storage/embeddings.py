"""The embedding cache (implements ``core.ports.EmbeddingCache``) on the ``embeddings`` table.

Vectors are opaque bytes to storage: the retrieval code decides the dtype and shape.
Like every ``Database``, an instance is bound to the thread that opened the connection.
"""

from __future__ import annotations

import datetime as dt

from sqlite_utils import Database

from storage.transactions import transaction

#: Keys per ``IN (…)`` list, well below SQLite's bound-variable limit.
CHUNK = 500


class SqliteEmbeddingCache:
    def __init__(self, db: Database):
        self.db = db

    def get_many(self, model: str, text_hashes: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(text_hashes))
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start : start + CHUNK]
            marks = ",".join("?" * len(chunk))
            for digest, vector in self.db.conn.execute(
                f"SELECT text_sha256, vector FROM embeddings WHERE model = ? AND text_sha256 IN ({marks})",
                [model, *chunk],
            ):
                found[digest] = bytes(vector)
        return found

    def put_many(self, model: str, vectors: dict[str, bytes]) -> None:
        if not vectors:
            return
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with transaction(self.db):
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, text_sha256, vector, created_at) VALUES (?, ?, ?, ?)",
                [(model, digest, bytes(vector), now) for digest, vector in vectors.items()],
            )
