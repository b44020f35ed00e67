"""Sentence vectors through ONNX Runtime and ``tokenizers``: the model's own tokenizer file and
its exported graph, mean pooling over real tokens, L2 norm (what sentence-transformers computes
for a Transformer → Pooling(mean) → Normalize folder), without importing torch.

Texts are encoded in batches of similar length, so little of a batch is padding; each batch goes
through the graph in runs of at most :data:`RUN_TOKENS` padded tokens. Thread pools do not spin
while idle: a streaming answer or the UI gets the core back at once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.history.embedding_model import ModelFolder
from core.history.vector_batches import OnBatch, gather

#: Padded tokens (rows × width) per ONNX Runtime call. Small runs keep the attention's activations
#: in the CPU's cache: on 2 cores, runs of 1,024 tokens encode 256-token turns ~20% faster than 32
#: rows a run (`bench/retrieval.py`), and short texts still go many to a run.
RUN_TOKENS = 1024


def runs(lengths: list[int], budget: int = RUN_TOKENS) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` spans of rows whose padded size (rows × the longest) stays
    within ``budget``; a row longer than the budget runs alone."""
    spans: list[tuple[int, int]] = []
    start, width = 0, 0
    for i, n in enumerate(lengths):
        if i > start and (i - start + 1) * max(width, n) > budget:
            spans.append((start, i))
            start, width = i, 0
        width = max(width, n)
    if lengths:
        spans.append((start, len(lengths)))
    return spans


class OnnxEncoder:
    def __init__(self, folder: ModelFolder, graph: Path, threads: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder.tokenizer))
        self.tokenizer.enable_truncation(max_length=folder.max_seq_length)
        self.tokenizer.no_padding()  # padded per batch below
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, threads)
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])
        self.wants = {i.name for i in self.session.get_inputs()}

    def encode(
        self,
        texts: list[str],
        batch_size: int = 32,
        on_batch: OnBatch | None = None,
    ) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised. ``on_batch(indexes, vectors)`` sees each batch
        as it is made (the caller caches it, reports progress, or raises to stop)."""
        encs = self.tokenizer.encode_batch(texts) if texts else []
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))  # similar lengths together
        batches = (order[start : start + batch_size] for start in range(0, len(order), batch_size))
        return gather(len(texts), ((idx, self._run([encs[i] for i in idx])) for idx in batches), on_batch)

    def _run(self, encs: list) -> np.ndarray:
        spans = runs([len(e.ids) for e in encs])
        return np.concatenate([self._forward(encs[start:end]) for start, end in spans])

    def _forward(self, encs: list) -> np.ndarray:
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), np.int64)
        mask = np.zeros((len(encs), width), np.int64)
        types = np.zeros((len(encs), width), np.int64)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = e.attention_mask
            types[row, :n] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self.wants})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
