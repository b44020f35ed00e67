"""The options that define a run, shared by `prefscope run` and `prefscope prompt`: one decorator
adds them, one function turns them into the RunSpec, so `prompt` prints the plan `run` sends.

--context, --turns, --method and --judge left out start from the user's benchmark's profile
(``--profile NAME`` another's, ``--profile none`` prefscope's own defaults): see
:mod:`core.run.profile`. So their click defaults are None, to tell an option given from one not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import click

from core.model import UserBundle
from core.run.spec import RunSpec
from core.settings import Settings
from tui.cli.common import fail

if TYPE_CHECKING:
    from core.run.profile import Resolved

#: Added to the profile's note (``prompt`` prints it, ``run`` stores it with the plan): how to leave it.
PROFILE_HINT = "an option given wins; --profile none: prefscope's defaults"


@dataclass(frozen=True)
class SpecOptions:
    expression: int | None
    #: None: not given (the profile's, else prefscope's default).
    context: str | None
    method: str | None
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
    #: A benchmark name, "none", or None: the user's benchmark's.
    profile: str | None

    def resolve(self, settings: Settings, bundle: UserBundle) -> Resolved:
        """Context, turns, method and judges: the options given, else the profile's, else
        prefscope's defaults (one red line for an unknown --profile or a --turns nothing takes)."""
        from core.history.configs import CONFIGS
        from core.run.profile import Choice, choose, prefscope_defaults, resolve, takes_turns

        benchmark = choose(self.profile, bundle.user.source)  # the name was checked when parsed
        given = Choice(self.context, self.turns, self.method, self.judges)
        resolved = resolve(given, benchmark, prefscope_defaults(settings.judge), settings.judge)
        if self.turns is not None and not takes_turns(resolved.context):
            names = " or ".join(c.name for c in CONFIGS.values() if c.takes_turns)
            whose = f", from the {resolved.title} profile" if "context" in resolved.from_profile else ""
            fail(f"--turns goes with --context {names} (got --context {resolved.context}{whose})")
        return resolved

    def spec(self, settings: Settings, bundle: UserBundle, query_id: str, resolved: Resolved | None = None) -> RunSpec:
        """The RunSpec these options describe (one red line for a bad --model or --base-url).
        Without --expression: the most implicit expression type the user has (as in the TUI).
        ``resolved``: :meth:`resolve`'s answer when the caller has it already."""
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
        chosen = resolved or self.resolve(settings, bundle)
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
            context=chosen.context,
            seed=self.seed,
            turns=chosen.turns,
            turns_order=self.turns_order,
            evidence_depth=self.evidence_depth,
            filler_pools=list(self.filler_pools) or None,
            method=chosen.method,
            method_options=options,
            models=specs,
            judges=list(chosen.judges),
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
        default=None,
        help="simple, normal, long, very_long, extended, extreme, full, oracle, summaries, none, custom, "
        "prefeval-turns (default: the profile's, else simple).",
    ),
    click.option(
        "--method", "-m", "method", default=None, help="See --list-methods (default: the profile's, else zero-shot)."
    ),
    click.option("--seed", "seed", type=int, default=0, show_default=True, help="Filler choice and placement."),
    click.option(
        "--turns",
        "turns",
        type=click.IntRange(0),
        default=None,
        help="prefeval-turns context: N inter turns (2N messages of PrefEval's pool) after the preference "
        "(default: the profile's, else 0).",
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
    click.option(
        "--judge",
        "judges",
        multiple=True,
        help="e.g. demo:heuristic or rubric:openai:gpt-4o-mini (default: the profile's, else the configured judge).",
    ),
    click.option("--replay", "replay", is_flag=True, help="Serve every model from its recorded responses."),
    click.option("--force", "force", is_flag=True, help="Go on even if the prompt exceeds a model's context window."),
    click.option(
        "--profile",
        "profile",
        default=None,
        metavar="NAME|none",
        callback=lambda ctx, param, value: _known_profile(value),
        help="Start from this benchmark's defaults (context, turns, method, judge; see `prefscope benchmarks`); "
        "default: the user's benchmark's; none: prefscope's own (simple, zero-shot, the configured judge). "
        "An option given always wins.",
    ),
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


def _known_profile(value: str | None) -> str | None:
    """``--profile``'s value, refused (a usage error) unless it names a profile or ``none``."""
    from core.run.profile import UnknownProfile, choose

    if value is not None:
        try:
            choose(value, None)
        except UnknownProfile as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def _parse_base_urls(items: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in items:
        model, sep, url = item.partition("=")
        if not sep or not url.startswith(("http://", "https://")):
            fail(f"--base-url takes MODEL=URL, e.g. openai:llama-3=http://127.0.0.1:8000/v1 (got {item!r})")
        out[model] = url
    return out


def with_profile_hint(message: str, resolved: Resolved) -> str:
    """An error of a plan built from a profile's defaults, saying so (they were not typed)."""
    if not resolved.applied:
        return message
    chosen = ", ".join(f"{name} {value}" for name, value in resolved.applied)
    return f"{message} (from the {resolved.title} profile: {chosen}; {PROFILE_HINT})"
