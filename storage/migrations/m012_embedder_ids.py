"""012: which embedder made a vector or a ranking, by id (``all-MiniLM-L6-v2@onnx-fp32``).

Vectors cached before this were all made by sentence-transformers: their key gains that engine, so
the default ONNX engine embeds afresh and the two never mix. ``retrievals.retrieved_by`` names who
ranked a run's turns (an embedder id or ``bm25``); it is NULL for rows stored before it existed.
"""

from __future__ import annotations

from sqlite_utils import Database


def up(db: Database) -> None:
    db.execute("UPDATE embeddings SET model = model || '@sentence-transformers' WHERE instr(model, '@') = 0")
    db.execute("ALTER TABLE retrievals ADD COLUMN retrieved_by TEXT")
