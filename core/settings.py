"""Settings: defaults < TOML file (XDG config path or --config) < PREFSCOPE_* env < CLI flags.

API keys are deliberately absent: providers read them from their usual env vars
(OPENAI_API_KEY, ANTHROPIC_API_KEY, …) at call time and nothing here stores them.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Annotated, Literal, get_origin

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

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

    model_config = ConfigDict(extra="forbid")  # a typo (or an api_key) is reported, never ignored

    base_url: str
    #: Env var holding its key, if it needs one (the key itself is never written here).
    api_key_env: str | None = None


#: litellm's routing strategies (its ``RoutingStrategyName``; a test keeps them in step).
RoutingStrategy = Literal[
    "simple-shuffle",
    "least-busy",
    "usage-based-routing",
    "latency-based-routing",
    "cost-based-routing",
    "usage-based-routing-v2",
    "lar1",
]


class Deployment(BaseModel):
    """One deployment (a key, region or server) of a router's model."""

    model_config = ConfigDict(extra="forbid")  # an api_key here is refused: keys stay in the env

    #: A litellm model string, e.g. ``openai/gpt-4o`` or ``azure/my-gpt4o``.
    model: str = Field(min_length=1)
    api_base: str | None = None
    #: NAME of the env var holding this deployment's key (the key itself is never written here).
    api_key_env: str | None = None
    #: Requests / tokens per minute this deployment allows: weights for ``simple-shuffle``,
    #: limits for the usage-based strategies.
    rpm: int | None = Field(default=None, gt=0)
    tpm: int | None = Field(default=None, gt=0)


class Router(BaseModel):
    """Several deployments of one model behind ``router:<name>`` (a litellm Router)."""

    model_config = ConfigDict(extra="forbid")

    routing_strategy: RoutingStrategy = "simple-shuffle"
    deployments: list[Deployment] = Field(min_length=1)

    @model_validator(mode="after")
    def _weights_on_all_or_none(self) -> Router:
        # simple-shuffle weighs by rpm (else tpm) as soon as one deployment has it: one without
        # it would silently get no traffic at all.
        if self.routing_strategy == "simple-shuffle":
            for limit in ("rpm", "tpm"):
                given = [getattr(d, limit) is not None for d in self.deployments]
                if any(given) and not all(given):
                    raise ValueError(
                        f"set {limit} on every deployment or on none: simple-shuffle routes by {limit} "
                        "weights, so a deployment without one would get no requests"
                    )
        return self


#: The binding ids a ``[keymap]`` may remap: every ``Binding(id=…)`` of the TUI (a test keeps
#: them in step; core cannot import the TUI to ask it).
BINDING_IDS = frozenset(
    {
        *(f"annotate.{a}" for a in ("attr.accept", "attr.reject", "attr.uncertain", "clear", "criteria", "leave")),
        *(f"annotate.{a}" for a in ("next", "next_dimension", "next_n", "note", "page_down", "page_up", "prev")),
        *(f"annotate.{a}" for a in ("pair.a", "pair.b", "pair.tie", "relevant.no", "relevant.yes", "save", "skip")),
        *(f"annotate.score{n}" for n in range(1, 6)),
        *("attributes.accept", "attributes.reject", "attributes.uncertain", "back", "cancel_all", "cancel_pane"),
        *("close", "close_compare", "close_help", "close_histogram", "close_score", "close_search", "close_text"),
        *("export.cancel", "full_turns", "funnel.close", "help", "human.cancel", "human_score", "judge_quality"),
        *(f"grid.{a}" for a in ("compare", "export", "filter", "group", "histogram", "mark", "open", "sort")),
        *(f"heatmap.{a}" for a in ("close", "cols", "metric", "rows", "swap")),
        *("judge_quality.close", "judge_quality.dimension", "judges.human", "judges.pairwise", "paired.close"),
        *("pairwise.cancel", "pick_models", "probe", "quit", "real_answers", "retry_pane", "run"),
        *("relevance.decide", "relevance.decide_embeddings", "relevance.no", "relevance.yes"),
        *("runs.funnel", "runs.heatmap", "score.evidence", "score.open", "screenshot", "search"),
        *(f"tab.{t}" for t in ("attributes", "diagnosis", "evidence", "judges", "prompt", "relevance", "runs")),
        *(f"timeline.{a}" for a in ("bottom", "down", "open", "page_down", "page_up", "top", "up")),
        *("toggle_reasons", "toggle_timeline", "zoom_tabs"),
    }
)
#: Bindings a keymap may move but not take away: id -> its default key.
ESSENTIAL_BINDINGS = {"quit": "ctrl+q"}
_MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
_NAMED_KEYS = frozenset(
    {"escape", "enter", "tab", "backspace", "delete", "insert", "home", "end", "pageup", "pagedown", "up", "down"}
    | {"left", "right", "space", "slash", "backslash", "at", "minus", "plus", "underscore", "newline"}
    | {"less_than_sign", "greater_than_sign", "hyphen_minus"}
    | {f"f{n}" for n in range(1, 25)}
)


def key_problem(key: str) -> str | None:
    """Why Textual would never fire ``key`` (``ctrl+r``, ``f5``, ``?``, ``question_mark``), or None."""
    import unicodedata

    *modifiers, base = key.split("+")
    bad = [m for m in modifiers if m not in _MODIFIERS]
    if bad:
        return f"{bad[0]!r} in {key!r} is not a modifier ({', '.join(sorted(_MODIFIERS))})"
    if len(base) == 1 and base.isprintable() and not base.isspace():
        return None
    if base in _NAMED_KEYS:
        return None
    try:
        unicodedata.lookup(base.replace("_", " ").upper())  # Textual's names: question_mark, full_stop …
    except KeyError:
        return f"{key!r} is not a key (e.g. ctrl+r, f5, escape, a, ?)"
    return None


def keymap_problems(keymap: dict[str, str]) -> list[str]:
    """Every entry of a keymap that names no binding, a key that cannot fire, or leaves an
    essential binding (quit) without its key: ``keymap.run = 'junk': not a key …``."""
    problems = []
    for binding, keys in keymap.items():
        entry = f"keymap.{binding} = {keys!r}"
        if binding not in BINDING_IDS:
            problems.append(f"{entry}: no binding {binding!r}{did_you_mean(binding, sorted(BINDING_IDS))}")
            continue
        parts = [k.strip() for k in keys.split(",")]
        if not any(parts):
            problems.append(
                f"{entry}: no key (an essential binding cannot be removed)"
                if binding in ESSENTIAL_BINDINGS
                else f"{entry}: no key"
            )
            continue
        for part in parts:
            why = "an empty key in the list" if not part else key_problem(part)
            if why:
                problems.append(f"{entry}: {why}")
                break
    for binding, default in ESSENTIAL_BINDINGS.items():
        own = {k.strip() for k in keymap.get(binding, default).split(",")}
        for other, keys in keymap.items():
            if other == binding or other not in BINDING_IDS:
                continue
            taken = own & {k.strip() for k in keys.split(",")}
            if taken:
                key = sorted(taken)[0]
                problems.append(f"keymap.{other} = {keys!r}: takes {key!r} from {binding}, which would have no key")
    return problems


#: Router names become model ids (``router:<name>``).
RouterName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")  # an unknown key is named, with a did-you-mean

    db: Path = Field(default_factory=lambda: data_dir() / "prefscope.db")
    #: Sentence-embedding model for RAG and relevance (the paper used sup-simcse-roberta-large).
    embedding_model: str = "all-MiniLM-L6-v2"
    #: Who runs it (core.history.encoders): "onnx" (fp32, the same vectors as sentence-transformers,
    #: no torch import), "onnx-int8" (faster, slightly different), "sentence-transformers" (torch).
    embedding_backend: Literal["onnx", "onnx-int8", "sentence-transformers"] = "onnx"
    #: The TUI embeds the open user's history in the background (one core), so RAG starts warm.
    embed_ahead: bool = True
    max_import_mb: int = 200
    #: Largest single text field (a turn, a persona, a query) an import accepts, in MB of characters.
    max_field_mb: float = Field(default=4.0, gt=0)
    #: A streamed answer longer than this is cut and stored as ``incomplete`` (~100k tokens: far
    #: past any output limit, so only a runaway or hostile stream reaches it).
    max_answer_chars: int = Field(default=400_000, gt=0)
    #: How long a write keeps retrying while another process holds the database's write lock;
    #: far longer than a lock is normally held. A write still refused then is reported, never dropped.
    write_deadline_s: float = Field(default=60.0, gt=0)
    #: PrefEval's data folder (SFT/ and explicit_preference/) for the demo's real recorded answers
    #: (f4); unset: ../shared/datasets/prefeval beside the working directory or the project.
    prefeval_dir: Path | None = None
    #: Pace of the offline demo models.
    demo_tokens_per_s: float = 40.0
    #: Where files written without a path of their own go (f8 screenshots, the workbench's CSV
    #: exports, `docs/make_screenshots.py` without --out): never the current directory, which is
    #: often a repository. `prefscope paths` shows it.
    outputs_dir: Path = Field(default_factory=lambda: data_dir() / "outputs")
    models: list[str] = Field(default_factory=lambda: list(DEFAULT_DEMO_MODELS))
    judge: str = "demo:heuristic"
    #: Who labels in an annotation queue when `--annotator` is not given (unset: ask).
    annotator: str | None = None
    endpoints: dict[str, Endpoint] = Field(default_factory=dict)
    #: Name -> several deployments of one model, used as ``router:<name>``.
    routers: dict[RouterName, Router] = Field(default_factory=dict)
    #: Binding id -> keys, e.g. {"run": "ctrl+r,f5"} (Textual's set_keymap); checked by
    #: :func:`keymap_problems` (an unknown id, a key that cannot fire, quit left without a key).
    keymap: dict[str, str] = Field(default_factory=dict)
    theme: str = "textual-dark"
    #: Refuse contexts larger than the model's window unless forced.
    enforce_context_window: bool = True
    #: Anthropic prompt caching of the history prefix (core.providers.prompt_cache): "auto" marks a
    #: prefix sent more than once, "always" every long one, "off" none. OpenAI caches on its own.
    prompt_cache: Literal["auto", "always", "off"] = "auto"

    @field_validator("keymap")
    @classmethod
    def _keymap_works(cls, keymap: dict[str, str]) -> dict[str, str]:
        problems = keymap_problems(keymap)
        if problems:
            raise ValueError("; ".join(problems))
        return keymap

    def key_envs(self) -> set[str]:
        """Names of every env var this configuration reads a key from (endpoints, router deployments)."""
        names = {ep.api_key_env for ep in self.endpoints.values()}
        names |= {d.api_key_env for r in self.routers.values() for d in r.deployments}
        return {n for n in names if n}

    @model_validator(mode="after")
    def _register_key_envs(self) -> Settings:
        # Whatever they are called, their values are secrets from now on (core.providers.redact).
        _KEY_ENVS.update(self.key_envs())
        return self


#: Every key variable a configuration read in this process names (see Settings.key_envs).
_KEY_ENVS: set[str] = set()


def configured_key_envs() -> set[str]:
    """The key variables named by any configuration read so far: core.providers.redact masks their values."""
    return set(_KEY_ENVS)


ENV_PREFIX = "PREFSCOPE_"
_SCALARS = (str, int, float, bool, Path)


#: ``PREFSCOPE_*`` variables that are not settings: the config file, `serve`'s token, test switches,
#: the embedder and token-count caches' places.
OTHER_ENV = frozenset({"CONFIG", "SERVE_TOKEN", "UPDATE_GOLDEN", "FUZZ_EXAMPLES", "EMBEDDER_CACHE", "TOKEN_CACHE"})


def env_values() -> dict:
    """``PREFSCOPE_<FIELD>`` variables; lists and tables are JSON (``PREFSCOPE_MODELS='["demo:oracle"]'``).
    Any other ``PREFSCOPE_*`` variable (except :data:`OTHER_ENV`) is a ValueError naming it.

    Read by hand rather than with pydantic-settings, whose import alone costs ~60 ms of start-up."""
    for var in sorted(os.environ):
        name = var.removeprefix(ENV_PREFIX)
        if var.startswith(ENV_PREFIX) and name not in OTHER_ENV and name.lower() not in Settings.model_fields:
            known = [ENV_PREFIX + f.upper() for f in Settings.model_fields] + [ENV_PREFIX + o for o in OTHER_ENV]
            raise ValueError(f"unknown environment variable {var}{did_you_mean(var, known)}")
    out: dict = {}
    for name, field in Settings.model_fields.items():
        raw = os.environ.get(f"{ENV_PREFIX}{name.upper()}")
        if raw is None:
            continue
        # a choice of words (Literal["onnx", …]) is a plain word too: PREFSCOPE_PROMPT_CACHE=off
        words = get_origin(field.annotation) is Literal
        scalar = field.annotation in _SCALARS or field.annotation == (Path | None) or words
        out[name] = raw if scalar else _json(name, raw)
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
        raise SettingsError(
            f"{path}: no such config file (named by --config or PREFSCOPE_CONFIG); create it, or point them "
            "at an existing file (`prefscope paths` shows where the default one lives)"
        )
    if path.is_file():
        try:
            with path.open("rb") as fh:
                file_values = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{path}: invalid TOML ({exc})") from exc
        except UnicodeDecodeError as exc:
            raise SettingsError(
                f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
            ) from None
        except OSError as exc:
            raise SettingsError(f"{path}: cannot read the config file ({exc.strerror or exc})") from None
    try:
        merged = {**file_values, **env_values()}
        merged.update({k: v for k, v in overrides.items() if v is not None})
        return Settings(**merged)
    except ValidationError as exc:
        unknown = [_unknown(e["loc"]) for e in exc.errors() if e["type"] == "extra_forbidden"]
        if unknown:
            raise SettingsError(f"{path}: unknown setting {'; unknown setting '.join(unknown)}") from exc
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SettingsError(f"setting {where!r} (from {path}, {ENV_PREFIX}* or a flag): {first['msg']}") from exc
    except ValueError as exc:
        raise SettingsError(str(exc)) from exc


def _unknown(loc: tuple) -> str:
    """``'thme' (did you mean 'theme'?); known: …`` for a key no model field has."""
    return unknown_key(loc, list(_model_at(loc).model_fields))


def unknown_key(loc: tuple, known: list[str], *, where: str = "") -> str:
    """``'thme' (did you mean 'theme'?) (known: …)`` for a key at ``loc`` that is none of ``known``;
    ``where`` (e.g. ``"in [concurrency]"``) goes after the key. Shared by every TOML file prefscope
    reads (the settings, grid files), so they word a misspelt key the same way."""
    key = ".".join(str(p) for p in loc)
    at = f" {where}" if where else ""
    return f"{key!r}{at}{did_you_mean(str(loc[-1]), known)} (known: {', '.join(known)})"


def _model_at(loc: tuple) -> type[BaseModel]:
    """The model whose key ``loc`` names: ``routers.<name>.deployments.<i>.<key>`` is a Deployment's."""
    if loc[0] == "endpoints":
        return Endpoint
    if loc[0] == "routers":
        return Deployment if "deployments" in loc[2:-1] else Router
    return Settings


def did_you_mean(name: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or ""."""
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class SettingsError(ValueError):
    """A config file or environment value prefscope cannot use; the message says which."""
