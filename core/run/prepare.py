"""From a RunSpec to the PromptPlan the engine sends: build the context, apply the method, check
every model's context window. The ONE path: the TUI, `prefscope run`, `prefscope prompt` and
`prefscope batch` all come here (through the workbench)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.history.build import abuild_context
from core.history.configs import ContextError, check_window, config_named
from core.history.filler import draws_filler, select_pools
from core.history.types import BuiltContext
from core.model import FillerPool, Session, UserBundle
from core.plan import PromptPlan
from core.ports import EmbeddingCache, SummaryCache
from core.providers.base import ModelSpec, Provider
from core.run.spec import RunSpec
from core.settings import Settings

if TYPE_CHECKING:
    from core.providers.server_window import ServerWindow  # imports httpx: only a base_url model needs it


@dataclass(frozen=True)
class Prepared:
    plan: PromptPlan
    #: What the history builder made (positions, filler, pending summaries): `prefscope prompt` shows it.
    context: BuiltContext


async def prepare(
    spec: RunSpec,
    bundle: UserBundle,
    filler_pools: Iterable[FillerPool],
    settings: Settings,
    *,
    provider_for: Callable[[ModelSpec], Provider] | None = None,
    embedding_cache: EmbeddingCache | None = None,
    summary_cache: SummaryCache | None = None,
    windows: dict[str, int | None] | None = None,
    write_summaries: bool = True,
    estimate_only: bool = False,
    embedding_threads: int | None = None,
    embed_progress: Callable[[int, int], None] | None = None,
    embed_stop: Callable[[], bool] | None = None,
) -> Prepared:
    """The exact plan for ``spec``. Raises ``core.history.configs.ContextError`` (with the numbers) when
    the context does not fit a model's window, unless ``spec.force`` is on or the settings do not
    enforce windows (then the plan carries a note), and ``core.history.filler.UnknownFillerPool``
    when the spec names a pool not in ``filler_pools``.

    ``filler_pools`` are the pools available; the context draws only from the ones the spec names
    (default: the user's own source's pool), and the plan records their ids.

    ``windows`` maps model id -> context window; missing ids are asked of their provider, and a
    self-hosted server (a ``base_url``) is asked what it serves (once per process; the plan notes
    its answer, or that it reported none and the window is unknown).
    ``write_summaries=False`` (`prefscope prompt`, which sends nothing): sessions of a summaries
    context without a cached summary show a placeholder and are listed in
    ``context.summary_requests`` instead of being summarised by a model call.
    ``estimate_only``: the plan only counts (an estimate): it never embeds, and a RAG plan whose
    vectors are not all cached gets BM25 stand-in turns (``plan.retrieval_stand_in``).
    ``embedding_threads``: encoder threads (None: every core; 1 beside other work).
    ``embed_progress(done, total)`` follows the embedding; ``embed_stop()`` true stops it between
    batches (``core.history.retrieval.EmbeddingStopped``; what finished stays cached).
    """
    from core import methods
    from core.methods.base import MethodOptions

    provider_for = provider_for or _registry(settings)
    query = bundle.query(spec.query_id)
    opts = spec.method_options
    summary_model = summary_model_for(spec)
    write = write_summaries and spec.context == "summaries"
    cfg = config_named(spec.context)
    available = list(filler_pools)
    pools = select_pools(spec.filler_pools, bundle.user.source, available, cfg.name)
    ctx = await abuild_context(
        bundle,
        query=query,
        expression_type=spec.expression_type,
        config=spec.context,
        seed=spec.seed,
        # custom names its sessions one by one (pool sessions included): every pool may serve it
        filler_pools=available if cfg.name == "custom" else pools,
        session_ids=opts.get("session_ids"),
        summary_cache=summary_cache,
        summarise=summariser(summary_model, provider_for(summary_model)) if write else None,
        summary_model=summary_model.id,
        turns=spec.turns,
        turns_order=spec.turns_order,
        evidence_depth=spec.evidence_depth,
    )
    options = MethodOptions(
        k=int(opts.get("k", 5)),
        retriever=str(opts.get("retriever", "embedding")),
        embedding_model=str(opts.get("embedding_model", settings.embedding_model)),
        embedding_backend=settings.embedding_backend,
        embedding_threads=embedding_threads,
        estimate_only=estimate_only,
        embed_progress=embed_progress,
        embed_stop=embed_stop,
        embedding_cache=embedding_cache,
        extra={k: v for k, v in opts.items() if k in ("prefeval_format",)},
    )
    plan = methods.plan(spec.method, ctx, query, options)
    if opts.get("outputs"):  # e.g. {"preference": PrefEval's recorded response_to_pref}
        from core.methods.base import apply_given_outputs

        plan = apply_given_outputs(plan, dict(opts["outputs"]), str(opts.get("outputs_source", "method_options")))
    plan.filler_pools = [p.id for p in pools] if draws_filler(cfg) else []
    force = spec.force or not settings.enforce_context_window
    answers = await ask_servers(spec, windows or {}, provider_for)
    plan.notes += [f"{model_id}: {answer.note}" for model_id, answer in answers.items()]
    windows = {model_id: answer.window for model_id, answer in answers.items()} | (windows or {})
    sources = {model_id: f"{model_id} at {answer.source}" for model_id, answer in answers.items()}
    plan.notes += window_notes(spec, plan, force, windows, provider_for, sources)
    plan.notes += limit_notes(spec, plan)
    return Prepared(plan, ctx)


def limit_notes(spec: RunSpec, plan: PromptPlan) -> list[str]:
    """Where a model param the user set overrides a step's protocol limit (the engine lets it win)."""
    notes = []
    for model in spec.models:
        for field in ("max_tokens", "temperature"):
            mine = getattr(model.params, field)
            steps = [s for s in plan.steps if getattr(s, field) is not None and getattr(s, field) != mine]
            if mine is None or not steps:
                continue
            wanted = ", ".join(f"{s.name} {getattr(s, field):g}" for s in steps)
            notes.append(f"{model.id}: your {field}={mine:g} overrides the protocol's per-step value ({wanted})")
    return notes


def messages_sha256(plan: PromptPlan) -> str:
    """sha256 of every step's messages in order: two plans with equal digests send the same prompts."""
    steps = [[m.model_dump(mode="json") for m in step.messages] for step in plan.steps]
    raw = json.dumps(steps, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


def summary_model_for(spec: RunSpec) -> ModelSpec:
    """Who writes the session summaries: ``method_options["summary_model"]``, else the first model."""
    chosen = spec.method_options.get("summary_model")
    return ModelSpec(id=chosen) if chosen else spec.models[0]


def summariser(model: ModelSpec, provider: Provider) -> Callable[[Session], Awaitable[str]]:
    """Summarise one session with CUPID's Fig. 23 prompt through the provider layer."""
    from core.methods.session_summary import session_summary_plan, summary_from_reply
    from core.providers.calls import collect

    async def summarise(session: Session) -> str:
        plan = session_summary_plan(session)
        done = await collect(provider, model, plan.steps[0].messages)
        if not done.ok:
            raise ContextError(f"summary of session {session.id} by {model.id} failed: {done.error}")
        return summary_from_reply(done.text)

    return summarise


async def ask_servers(
    spec: RunSpec, windows: dict[str, int | None], provider_for: Callable[[ModelSpec], Provider]
) -> dict[str, ServerWindow]:
    """What each self-hosted server among the models (a ``base_url``) reports as its window, asked
    together and once per process; models given a window in ``windows`` are not asked."""
    asks = {}
    for model in spec.models:
        if model.id in windows or model.id in asks:
            continue
        discover = getattr(provider_for(model), "discover_context_window", None)
        if discover is not None:
            asks[model.id] = discover(model)
    answers = await asyncio.gather(*asks.values())
    return {model_id: answer for model_id, answer in zip(asks, answers) if answer is not None}


def window_notes(
    spec: RunSpec,
    plan: PromptPlan,
    force: bool,
    windows: dict[str, int | None],
    provider_for: Callable[[ModelSpec], Provider],
    sources: dict[str, str] | None = None,
) -> list[str]:
    """Refuse (raise) or note, per model, a prompt larger than the model's context window.
    ``sources`` names, per model id, where its window came from (a server's answer) for the refusal."""
    notes = []
    sources = sources or {}
    biggest = max(s.tokens for s in plan.steps)
    for model in spec.models:
        window = windows[model.id] if model.id in windows else provider_for(model).context_window(model)
        note = check_window(biggest, window, force, source=sources.get(model.id))
        if note:
            notes.append(f"{model.id}: {note}")
    return notes


def _registry(settings: Settings) -> Callable[[ModelSpec], Provider]:
    from core.providers import get_provider

    return lambda model: get_provider(model, settings)
