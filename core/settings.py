"""Settings: defaults < TOML file (XDG config path or --config) < PREFSCOPE_* env < CLI flags.

API keys are deliberately absent: providers read them from their usual env vars
(OPENAI_API_KEY, ANTHROPIC_API_KEY, …) at call time and nothing here stores them.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import platformdirs
from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

APP = "prefscope"
DEFAULT_DEMO_MODELS = ["demo:generic", "demo:retrieval", "demo:oracle"]


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_path() -> Path:
    return Path(os.environ.get("PREFSCOPE_CONFIG") or Path(platformdirs.user_config_dir(APP, appauthor=False)) / "config.toml")


class Endpoint(BaseModel):
    """A named OpenAI-compatible server, e.g. a local vLLM: used as ``<name>:<model>``."""

    base_url: str
    #: Env var holding its key, if it needs one (the key itself is never written here).
    api_key_env: str | None = None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PREFSCOPE_", extra="ignore")

    db: Path = Field(default_factory=lambda: data_dir() / "prefscope.db")
    #: Sentence-embedding model for RAG and relevance (the paper used sup-simcse-roberta-large).
    embedding_model: str = "all-MiniLM-L6-v2"
    max_import_mb: int = 200
    #: Pace of the offline demo models.
    demo_tokens_per_s: float = 80.0
    models: list[str] = Field(default_factory=lambda: list(DEFAULT_DEMO_MODELS))
    judge: str = "demo:heuristic"
    endpoints: dict[str, Endpoint] = Field(default_factory=dict)
    #: Binding id -> keys, e.g. {"run": "ctrl+r,f5"} (Textual's set_keymap).
    keymap: dict[str, str] = Field(default_factory=dict)
    theme: str = "textual-dark"
    #: Refuse contexts larger than the model's window unless forced.
    enforce_context_window: bool = True

    @classmethod
    def settings_customise_sources(
        cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings)


def load_settings(config: str | Path | None = None, **overrides) -> Settings:
    """Read the TOML file (if any), then env, then explicit overrides (CLI flags)."""
    path = Path(config) if config else config_path()
    file_values: dict = {}
    if path.is_file():
        with path.open("rb") as fh:
            file_values = tomllib.load(fh)
    env_view = Settings.model_construct()  # only to know the field names
    env_set = {name for name in type(env_view).model_fields if f"PREFSCOPE_{name.upper()}" in os.environ}
    merged = {k: v for k, v in file_values.items() if k not in env_set}
    merged.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**merged)
