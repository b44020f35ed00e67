"""From a RunSpec to the PromptPlan the engine sends: build the context, apply the method,
check every model's context window. Shared by the TUI, `prefscope run` and `prefscope batch`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from core.history.build import build_context
from core.history.configs import ContextError, check_window
from core.model import FillerPool, Session, UserBundle
from core.plan import ContextEntry, PromptPlan
from core.ports import EmbeddingCache, SummaryCache
from core.run.spec import RunSpec
from core.settings import Settings


def prepare_plan(
    spec: RunSpec,
    bundle: UserBundle,
    filler_pools: Iterable[FillerPool],
    settings: Settings,
    *,
    embedding_cache: EmbeddingCache | None = None,
    summary_cache: SummaryCache | None = None,
    windows: dict[str, int | None] | None = None,
) -> PromptPlan:
    """The exact plan for ``spec``. Raises ``core.history.configs.ContextError`` (with the numbers) when
    the context does not fit a model's window and ``spec.force`` is off.

    ``windows`` maps model id -> context window; missing ids are asked of their provider.
    """
    from core import methods
    from core.methods.base import MethodOptions

    query = bundle.query(spec.query_id)
    opts = spec.method_options
    summary_model = summary_model_for(spec)
    ctx = build_context(
        bundle,
        query=query,
        expression_type=spec.expression_type,
        config=spec.context,
        seed=spec.seed,
        filler_pools=filler_pools,
        session_ids=opts.get("session_ids"),
        summary_cache=summary_cache,
        summarise=summariser(summary_model, settings) if spec.context == "summaries" else None,
        summary_model=summary_model.id,
    )
    options = MethodOptions(
        k=int(opts.get("k", 5)),
        retriever=str(opts.get("retriever", "embedding")),
        embedding_model=str(opts.get("embedding_model", settings.embedding_model)),
        embedding_cache=embedding_cache,
    )
    plan = methods.plan(spec.method, ctx, query, options)
    plan.context = [ContextEntry(session_id=cs.key, tokens=cs.tokens, filler=cs.is_filler) for cs in ctx.sessions]
    for note in window_notes(spec, plan, settings, windows or {}):
        plan.notes.append(note)
    return plan


def summary_model_for(spec: RunSpec):
    """Who writes the session summaries: ``method_options["summary_model"]``, else the first model."""
    from core.providers.base import ModelSpec

    chosen = spec.method_options.get("summary_model")
    return ModelSpec(id=chosen) if chosen else spec.models[0]


def summariser(model, settings: Settings) -> Callable[[Session], str]:
    """Summarise one session with CUPID's Fig. 23 prompt through the provider layer.

    prepare_plan is synchronous; each summary call runs on its own event loop (on a helper
    thread when the caller is itself inside a running loop, as a batch is)."""
    from core.methods.cupid import session_summary_plan, summary_from_reply
    from core.providers import get_provider
    from core.providers.calls import collect

    provider = get_provider(model, settings)

    def summarise(session: Session) -> str:
        plan = session_summary_plan(session)
        done = _run(lambda: collect(provider, model, plan.steps[0].messages))
        if not done.ok:
            raise ContextError(f"summary of session {session.id} by {model.id} failed: {done.error}")
        return summary_from_reply(done.text)

    return summarise


def _run(make_coro):
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make_coro())).result()


def window_notes(spec: RunSpec, plan: PromptPlan, settings: Settings, windows: dict[str, int | None]) -> list[str]:
    """Refuse (raise) or note, per model, a prompt larger than the model's context window."""
    from core.providers import get_provider

    notes = []
    biggest = max(s.tokens for s in plan.steps)
    for model in spec.models:
        window = windows[model.id] if model.id in windows else get_provider(model, settings).context_window(model)
        note = check_window(biggest, window, spec.force)
        if note:
            notes.append(f"{model.id}: {note}")
    return notes
