"""The embedding cache table behind core.ports.EmbeddingCache."""

from __future__ import annotations

import hashlib
import struct

from core.ports import EmbeddingCache
from storage.db import open_db
from storage.embeddings import SqliteEmbeddingCache


def _vec(*xs: float) -> bytes:
    return struct.pack(f"<{len(xs)}f", *xs)


def test_put_get_replace_and_models_are_separate(tmp_path):
    cache: EmbeddingCache = SqliteEmbeddingCache(open_db(tmp_path / "e.db"))
    h1, h2 = (hashlib.sha256(t.encode()).hexdigest() for t in ("one", "two"))
    cache.put_many("mini", {h1: _vec(1, 2), h2: _vec(3, 4)})
    cache.put_many("other", {h1: _vec(9, 9)})
    assert cache.get_many("mini", [h1, h2, "missing"]) == {h1: _vec(1, 2), h2: _vec(3, 4)}
    assert cache.get_many("other", [h1, h2]) == {h1: _vec(9, 9)}
    cache.put_many("mini", {h1: _vec(5, 6)})
    assert cache.get_many("mini", [h1]) == {h1: _vec(5, 6)}
    assert cache.get_many("mini", []) == {}
    cache.put_many("mini", {})


def test_many_keys_survive_reopening(tmp_path):
    path = tmp_path / "e.db"
    vectors = {hashlib.sha256(str(i).encode()).hexdigest(): _vec(i, -i) for i in range(1_234)}
    SqliteEmbeddingCache(open_db(path)).put_many("m", vectors)
    again = SqliteEmbeddingCache(open_db(path))
    assert again.get_many("m", list(vectors) * 2) == vectors
