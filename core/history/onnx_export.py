"""The ONNX graph of a local embedding model, exported once from its own weights with torch and
kept in the user's cache folder (never downloaded). torch is imported here only, on export.

fp32 is the graph as exported; int8 is onnxruntime's dynamic quantisation of it (opt-in, faster,
slightly different vectors: ``bench/retrieval.py`` reports its quality). Files are written to a
temporary name and renamed, so a crash or a second process never leaves half a graph behind.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import platformdirs

from core.history.embedding_model import ModelFolder, RetrievalError

PRECISIONS = ("fp32", "int8")
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def cache_root() -> Path:
    """``$PREFSCOPE_EMBEDDER_CACHE`` or the user's cache folder (``~/.cache/prefscope/embedders``)."""
    chosen = os.environ.get("PREFSCOPE_EMBEDDER_CACHE")
    return Path(chosen) if chosen else Path(platformdirs.user_cache_dir("prefscope", appauthor=False)) / "embedders"


def graph_path(folder: ModelFolder, precision: str, root: Path | None = None) -> Path:
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in folder.path.name)[-60:]
    return (root or cache_root()) / f"{slug}-{folder.fingerprint()}" / f"model-{precision}.onnx"


def ensure_graph(folder: ModelFolder, precision: str = "fp32", root: Path | None = None) -> Path:
    """The cached graph for ``folder`` at ``precision``, exporting it first when missing."""
    if precision not in PRECISIONS:
        raise RetrievalError(f"unknown ONNX precision {precision!r}; expected one of {', '.join(PRECISIONS)}")
    target = graph_path(folder, precision, root)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if precision == "fp32":
        _export_fp32(folder, target)
    else:
        _quantize_int8(ensure_graph(folder, "fp32", root), target)
    return target


def _temporary(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _export_fp32(folder: ModelFolder, target: Path) -> None:
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise RetrievalError(f"exporting the embedding model to ONNX needs torch and transformers: {exc}") from exc

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        # eager attention: the traced graph then keeps the padding mask as an input, not a constant
        model = AutoModel.from_pretrained(str(folder.path), local_files_only=True, attn_implementation="eager").eval()
    except Exception as exc:
        raise RetrievalError(f"cannot load embedding weights from {folder.path}: {exc}") from exc

    class LastHidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    example = tuple(torch.ones(2, 8, dtype=torch.long) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    tmp = _temporary(target)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about shapes: the axes above are dynamic
            torch.onnx.export(
                LastHidden(model),
                example,
                str(tmp),
                input_names=list(INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, target)
    except Exception as exc:
        raise RetrievalError(f"exporting {folder.path} to ONNX failed: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _quantize_int8(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = _temporary(target)
    try:
        # per channel: one scale per output column keeps the vectors close (cosine ~0.99 vs ~0.94)
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, target)
    except Exception as exc:
        raise RetrievalError(f"quantising {source} to int8 failed: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def main() -> None:
    """``python -m core.history.onnx_export``: export the bundled model's graph now (``make install``)."""
    from core.history.embedding_model import BUNDLED_MODEL, read_folder

    print(f"embedding graph: {ensure_graph(read_folder(BUNDLED_MODEL))}")


if __name__ == "__main__":
    main()
