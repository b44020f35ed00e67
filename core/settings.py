"""Settings: defaults < TOML file (XDG config path or --config) < PREFSCOPE_* env < CLI flags.

API keys are deliberately absent: providers read them from their usual env vars
(OPENAI_API_KEY, ANTHROPIC_API_KEY, …) at call time and nothing here stores them.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError

APP = "prefscope"
DEFAULT_DEMO_MODELS = ["demo:generic", "demo:retrieval", "demo:oracle"]


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_path() -> Path:
    return Path(
        os.environ.get("PREFSCOPE_CONFIG") or Path(platformdirs.user_config_dir(APP, appauthor=False)) / "config.toml"
    )


class Endpoint(BaseModel):
    """A named OpenAI-compatible server, e.g. a local vLLM: used as ``<name>:<model>``."""

    base_url: str
    #: Env var holding its key, if it needs one (the key itself is never written here).
    api_key_env: str | None = None


class Settings(BaseModel):
    model_config = ConfigDict(extra="ignore")

    db: Path = Field(default_factory=lambda: data_dir() / "prefscope.db")
    #: Sentence-embedding model for RAG and relevance (the paper used sup-simcse-roberta-large).
    embedding_model: str = "all-MiniLM-L6-v2"
    max_import_mb: int = 200
    #: How long a write keeps retrying while another process holds the database's write lock;
    #: far longer than a lock is normally held. A write still refused then is reported, never dropped.
    write_deadline_s: float = Field(default=60.0, gt=0)
    #: Pace of the offline demo models.
    demo_tokens_per_s: float = 40.0
    models: list[str] = Field(default_factory=lambda: list(DEFAULT_DEMO_MODELS))
    judge: str = "demo:heuristic"
    endpoints: dict[str, Endpoint] = Field(default_factory=dict)
    #: Binding id -> keys, e.g. {"run": "ctrl+r,f5"} (Textual's set_keymap).
    keymap: dict[str, str] = Field(default_factory=dict)
    theme: str = "textual-dark"
    #: Refuse contexts larger than the model's window unless forced.
    enforce_context_window: bool = True


ENV_PREFIX = "PREFSCOPE_"
_SCALARS = (str, int, float, bool, Path)


def env_values() -> dict:
    """``PREFSCOPE_<FIELD>`` variables; lists and tables are JSON (``PREFSCOPE_MODELS='["demo:oracle"]'``).

    Read by hand rather than with pydantic-settings, whose import alone costs ~60 ms of start-up."""
    out: dict = {}
    for name, field in Settings.model_fields.items():
        raw = os.environ.get(f"{ENV_PREFIX}{name.upper()}")
        if raw is None:
            continue
        out[name] = raw if field.annotation in _SCALARS else _json(name, raw)
    return out


def _json(name: str, raw: str) -> object:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{ENV_PREFIX}{name.upper()} must be JSON for this setting: {exc}") from exc


def load_settings(config: str | Path | None = None, **overrides: object) -> Settings:
    """Read the TOML file (if any), then env, then explicit overrides (CLI flags)."""
    path = Path(config) if config else config_path()
    file_values: dict = {}
    if config and not path.is_file():
        raise SettingsError(f"{path}: no such config file")
    if path.is_file():
        try:
            with path.open("rb") as fh:
                file_values = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{path}: invalid TOML ({exc})") from exc
    try:
        merged = {**file_values, **env_values()}
        merged.update({k: v for k, v in overrides.items() if v is not None})
        return Settings(**merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SettingsError(f"setting {where!r} (from {path}, {ENV_PREFIX}* or a flag): {first['msg']}") from exc
    except ValueError as exc:
        raise SettingsError(str(exc)) from exc


class SettingsError(ValueError):
    """A config file or environment value prefscope cannot use; the message says which."""
