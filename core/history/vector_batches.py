"""Vectors made batch by batch: what an encoder hands back after each batch, and the matrix of all."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

#: Called with each finished batch: the texts' indexes and their vectors (to cache, to show progress).
OnBatch = Callable[[list[int], np.ndarray], None]


def gather(n: int, batches: Iterable[tuple[list[int], np.ndarray]], on_batch: OnBatch | None) -> np.ndarray:
    """(n, dim) from ``(indexes, vectors)`` batches, each handed to ``on_batch`` as it arrives."""
    out: np.ndarray | None = None
    for idx, vecs in batches:
        if out is None:
            out = np.zeros((n, vecs.shape[1]), np.float32)
        out[idx] = vecs
        if on_batch is not None:
            on_batch(idx, vecs)
    return out if out is not None else np.zeros((0, 0), np.float32)
