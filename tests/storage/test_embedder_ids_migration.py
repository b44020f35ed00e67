"""Migration 012: cached vectors made before engines had ids are sentence-transformers' and keep
that name; retrieval rows gain who ranked them (NULL for the old ones)."""

from __future__ import annotations

from storage.db import open_db
from storage.embeddings import SqliteEmbeddingCache
from storage.migrations import discover, migrate


def test_old_vectors_are_named_by_their_engine_and_retrievals_gain_retrieved_by(tmp_path):
    path = tmp_path / "old.db"
    old = open_db(path, migrate=False)
    migrate(old, [m for m in discover() if m.version < 12])
    old.conn.executescript(
        """
        INSERT INTO embeddings (model, text_sha256, vector, created_at) VALUES
            ('all-MiniLM-L6-v2', 'aa', x'00000000', '2025-01-01'),
            ('/models/my-minilm', 'bb', x'00000000', '2025-01-01');
        INSERT INTO runs (id, created_at, user_id, query_id, context, seed, method, spec, plan, status)
        VALUES ('run_old', '2025-01-01', 'maya', 'q1', 'simple', 0, 'rag', '{}', '{}', 'ok');
        INSERT INTO retrievals (run_id, rank, session_id, turn_index, similarity, is_evidence)
        VALUES ('run_old', 1, 's1', 0, 0.5, 1);
        """
    )
    old.conn.commit()
    old.close()

    db = open_db(path)
    cache = SqliteEmbeddingCache(db)
    assert cache.get_many("all-MiniLM-L6-v2@sentence-transformers", ["aa"]) == {"aa": b"\x00" * 4}
    assert cache.get_many("all-MiniLM-L6-v2@onnx-fp32", ["aa"]) == {}  # never mixed with the new engine
    assert cache.get_many("/models/my-minilm@sentence-transformers", ["bb"]) == {"bb": b"\x00" * 4}
    assert db.execute("SELECT session_id, retrieved_by FROM retrievals").fetchall() == [("s1", None)]
    db.close()
