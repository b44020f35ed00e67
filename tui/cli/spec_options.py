"""The options that define a run, shared by `prefscope run` and `prefscope prompt`: one decorator
adds them, one function turns them into the RunSpec, so `prompt` prints the plan `run` sends."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields

import click

from core.model import UserBundle
from core.run.spec import RunSpec
from core.settings import Settings
from tui.cli.common import fail


@dataclass(frozen=True)
class SpecOptions:
    expression: int | None
    context: str
    method: str
    seed: int
    turns: int | None
    turns_order: str
    evidence_depth: float | None
    filler_pools: tuple[str, ...]
    k: int | None
    retriever: str | None
    sessions: str
    models: tuple[str, ...]
    base_urls: tuple[str, ...]
    temperature: float | None
    max_tokens: int | None
    timeout_s: float
    judges: tuple[str, ...]
    replay: bool
    force: bool

    def spec(self, settings: Settings, bundle: UserBundle, query_id: str) -> RunSpec:
        """The RunSpec these options describe (one red line for a bad --model or --base-url).
        Without --expression: the most implicit expression type the user has (as in the TUI)."""
        from core.providers.base import ModelParams, ModelSpec

        urls = _parse_base_urls(self.base_urls)
        params = ModelParams(temperature=self.temperature, max_tokens=self.max_tokens, timeout_s=self.timeout_s)
        ids = list(self.models) or list(settings.models)
        if self.replay:
            ids = [i if i.startswith("replay:") else f"replay:{i}" for i in ids]
        try:
            specs = [ModelSpec(id=i, params=params, base_url=urls.get(i.removeprefix("replay:"))) for i in ids]
        except ValueError as exc:
            fail(f"bad --model: {exc.errors()[0]['input']!r} (expected provider:model)")  # type: ignore[attr-defined]
        if self.turns is not None and self.context.strip().lower().replace("_", "-") not in ("prefeval-turns", "turns"):
            fail(f"--turns goes with --context prefeval-turns (got --context {self.context})")
        expression = self.expression if self.expression is not None else bundle.expression_types()[-1]
        options: dict = {}
        if self.k:
            options["k"] = self.k
        if self.retriever:
            options["retriever"] = self.retriever
        session_ids = [s.strip() for s in self.sessions.split(",") if s.strip()]
        if session_ids:
            options["session_ids"] = session_ids
        return RunSpec(
            user_id=bundle.user.id,
            query_id=query_id,
            expression_type=expression,
            context=self.context,
            seed=self.seed,
            turns=self.turns,
            turns_order=self.turns_order,
            evidence_depth=self.evidence_depth,
            filler_pools=list(self.filler_pools) or None,
            method=self.method,
            method_options=options,
            models=specs,
            judges=list(self.judges) or ([settings.judge] if settings.judge else []),
            force=self.force,
            replay=self.replay,
        )


_OPTIONS = [
    click.option(
        "--expression",
        "-e",
        "expression",
        type=click.IntRange(0, 4),
        default=None,
        help="Expression type 1-4 (default: the most implicit present).",
    ),
    click.option(
        "--context",
        "-c",
        "context",
        default="simple",
        show_default=True,
        help="simple, normal, long, very_long, extended, extreme, full, oracle, summaries, none, custom, prefeval-turns.",
    ),
    click.option("--method", "-m", "method", default="zero-shot", show_default=True, help="See --list-methods."),
    click.option("--seed", "seed", type=int, default=0, show_default=True, help="Filler choice and placement."),
    click.option(
        "--turns",
        "turns",
        type=click.IntRange(0),
        default=None,
        help="prefeval-turns context: N inter turns (2N messages of PrefEval's pool) after the preference.",
    ),
    click.option(
        "--turns-order",
        "turns_order",
        type=click.Choice(["official", "shuffled"]),
        default="official",
        show_default=True,
        help="official: the pool's first 2N messages, as PrefEval (--seed has no effect); shuffled: ours, seeded.",
    ),
    click.option(
        "--evidence-depth",
        "evidence_depth",
        type=click.FloatRange(0, 1),
        default=None,
        help="Move the gold evidence sessions to this depth of the history: 0 = first, 1 = just before the question.",
    ),
    click.option(
        "--filler-pool",
        "filler_pools",
        multiple=True,
        help="Filler pool id to draw from (repeatable; default: the user's own source's pool; see `prefscope users`).",
    ),
    click.option("--k", "k", type=int, default=None, help="RAG: turns to retrieve (default 5)."),
    click.option(
        "--retriever",
        "retriever",
        type=click.Choice(["embedding", "bm25"]),
        default=None,
        help="RAG: how turns are retrieved (default embedding).",
    ),
    click.option("--sessions", "sessions", default="", help="custom context: comma-separated session ids."),
    click.option(
        "--model", "models", multiple=True, help="provider:model, repeatable (default: the configured models)."
    ),
    click.option(
        "--base-url",
        "base_urls",
        multiple=True,
        help="MODEL=URL for an OpenAI-compatible server (vLLM, llama.cpp, Ollama).",
    ),
    click.option("--temperature", "temperature", type=float, default=None),
    click.option("--max-tokens", "max_tokens", type=int, default=None),
    click.option(
        "--timeout", "timeout_s", type=float, default=300.0, show_default=True, help="Deadline per call in seconds."
    ),
    click.option("--judge", "judges", multiple=True, help="e.g. demo:heuristic or rubric:openai:gpt-4o-mini."),
    click.option("--replay", "replay", is_flag=True, help="Serve every model from its recorded responses."),
    click.option("--force", "force", is_flag=True, help="Go on even if the prompt exceeds a model's context window."),
]
_NAMES = [f.name for f in fields(SpecOptions)]


def spec_options(command: Callable) -> Callable:
    """Add the run-defining options to a click command; it receives them as ``spec_options``."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        opts = SpecOptions(**{name: kwargs.pop(name) for name in _NAMES})
        return command(*args, spec_options=opts, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def _parse_base_urls(items: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in items:
        model, sep, url = item.partition("=")
        if not sep or not url.startswith(("http://", "https://")):
            fail(f"--base-url takes MODEL=URL, e.g. openai:llama-3=http://127.0.0.1:8000/v1 (got {item!r})")
        out[model] = url
    return out
