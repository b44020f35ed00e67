"""Which engine turns texts into vectors, and the one loaded instance of each per process.

``onnx`` (default): the model's exported graph through ONNX Runtime, fp32 — the same vectors as
sentence-transformers (cosine ≥ 0.9999) without importing torch. ``onnx-int8``: the quantised
graph, faster, slightly different vectors. ``sentence-transformers``: torch, the fallback, also
used when ONNX Runtime is missing or the folder is not a mean-pooled Transformer.

An embedder id (``all-MiniLM-L6-v2@onnx-fp32``) names model and engine: it keys the embedding
cache and is stored with every retrieval, so vectors of different engines never mix.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from core.history.embedding_model import RetrievalError, read_folder, resolve_model_path
from core.history.vector_batches import OnBatch, gather

BACKENDS = ("onnx", "onnx-int8", "sentence-transformers")
_KIND = {"onnx": "onnx-fp32", "onnx-int8": "onnx-int8", "sentence-transformers": "sentence-transformers"}


class Encoder(Protocol):
    def encode(self, texts: list[str], batch_size: int = 32, on_batch: OnBatch | None = None) -> np.ndarray: ...


@dataclass(frozen=True)
class Engine:
    model: str
    #: ``onnx-fp32``, ``onnx-int8`` or ``sentence-transformers``.
    kind: str
    #: Why the configured backend was not used (empty when it was).
    fallback_note: str = ""

    @property
    def id(self) -> str:
        return f"{self.model}@{self.kind}"


def choose_engine(model: str, backend: str = "onnx") -> Engine:
    """The engine that will embed for ``model`` under ``backend``: reads small files only."""
    if backend not in BACKENDS:
        raise RetrievalError(f"unknown embedding backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if backend == "sentence-transformers":
        return Engine(model, _KIND[backend])
    folder = read_folder(model)
    why = folder.unsupported
    if why is None and importlib.util.find_spec("onnxruntime") is None:
        why = "onnxruntime is not installed"
    if why is not None:
        return Engine(model, _KIND["sentence-transformers"], f"{backend} cannot run {model}: {why}")
    return Engine(model, _KIND[backend])


_ENCODERS: dict[tuple[str, int], Encoder] = {}
_LOCK = threading.Lock()


def encoder_for(engine: Engine, threads: int | None = None) -> Encoder:
    """The loaded encoder (once per process and thread count). ``threads`` None: every core."""
    threads = max(1, threads or os.cpu_count() or 1)
    key = (engine.id, threads if engine.kind != "sentence-transformers" else 0)
    with _LOCK:  # a background embedder and a prepare may ask at once: load once
        if key not in _ENCODERS:
            _ENCODERS[key] = _load(engine, threads)
        return _ENCODERS[key]


def encoder_ready(engine: Engine) -> bool:
    """Loaded already, or loadable in well under a second (the graph is exported; torch imported)."""
    if any(key[0] == engine.id for key in _ENCODERS):
        return True
    if engine.kind == "sentence-transformers":
        import sys

        return "sentence_transformers" in sys.modules
    from core.history.onnx_export import graph_path

    return graph_path(read_folder(engine.model), engine.kind.removeprefix("onnx-")).is_file()


def _load(engine: Engine, threads: int) -> Encoder:
    if engine.kind == "sentence-transformers":
        return TorchEncoder(engine.model)
    from core.history.onnx_encoder import OnnxEncoder
    from core.history.onnx_export import ensure_graph

    folder = read_folder(engine.model)
    graph = ensure_graph(folder, engine.kind.removeprefix("onnx-"))
    try:
        return OnnxEncoder(folder, graph, threads=threads)
    except Exception as exc:  # a damaged cached graph: say where, so it can be deleted
        raise RetrievalError(f"cannot load the ONNX graph {graph}: {exc} (delete it to export again)") from exc


class TorchEncoder:
    """sentence-transformers on CPU, offline; batches handed to ``on_batch`` as they are made."""

    def __init__(self, model: str) -> None:
        path = resolve_model_path(model)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar in the CLI / TUI
        try:
            self.model = SentenceTransformer(path, device="cpu", local_files_only=True)
        except Exception as exc:  # a broken folder: say which
            raise RetrievalError(f"cannot load embedding model {model!r} from {path}: {exc}") from exc

    def encode(self, texts: list[str], batch_size: int = 32, on_batch: OnBatch | None = None) -> np.ndarray:
        return gather(len(texts), self._batches(texts, batch_size), on_batch)

    def _batches(self, texts: list[str], batch_size: int) -> Iterator[tuple[list[int], np.ndarray]]:
        for start in range(0, len(texts), batch_size):
            idx = list(range(start, min(start + batch_size, len(texts))))
            vecs = self.model.encode(
                [texts[i] for i in idx],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            yield idx, np.asarray(vecs, dtype=np.float32)
