"""`prefscope run`: stream models side by side in the terminal and store the run; `prefscope runs`."""

from __future__ import annotations

import asyncio
import sys

import click

from tui.cli.common import console, fail, open_services


@click.command()
@click.argument("user")
@click.argument("query")
@click.option(
    "--expression",
    "-e",
    type=click.IntRange(0, 4),
    default=None,
    help="Expression type 1-4 (default: the most implicit present).",
)
@click.option(
    "--context",
    "-c",
    default="simple",
    show_default=True,
    help="simple, normal, long, very_long, extended, extreme, full, oracle, none, custom.",
)
@click.option(
    "--method", "-m", default="zero-shot", show_default=True, help="See `prefscope prompt --help` for the list."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--k", type=int, default=None, help="RAG: turns to retrieve.")
@click.option("--model", "models", multiple=True, help="provider:model, repeatable (default: the three demo models).")
@click.option(
    "--base-url",
    "base_urls",
    multiple=True,
    help="MODEL=URL for an OpenAI-compatible server (vLLM, llama.cpp, Ollama).",
)
@click.option("--temperature", type=float, default=None)
@click.option("--max-tokens", type=int, default=None)
@click.option(
    "--timeout", "timeout_s", type=float, default=300.0, show_default=True, help="Deadline per call in seconds."
)
@click.option("--judge", "judges", multiple=True, help="e.g. demo:heuristic or rubric:openai:gpt-4o-mini.")
@click.option("--replay", is_flag=True, help="Serve every model from its recorded responses (offline demo).")
@click.option("--force", is_flag=True, help="Send even if the prompt exceeds a model's context window.")
@click.option("--plain", is_flag=True, help="No live layout: print each answer when it finishes.")
@click.pass_obj
def run(
    obj,
    user,
    query,
    expression,
    context,
    method,
    seed,
    k,
    models,
    base_urls,
    temperature,
    max_tokens,
    timeout_s,
    judges,
    replay,
    force,
    plain,
):
    """Stream MODELs on one USER's QUERY side by side and store the run."""
    from core.history.configs import ContextError
    from core.methods import UnknownMethod
    from core.providers.base import ModelParams, ModelSpec
    from core.run.spec import RunSpec

    settings, workbench = open_services(obj)
    try:
        bundle = workbench.user(user)
        bundle.query(query)
    except (LookupError, KeyError) as exc:
        fail(str(exc).strip("'\""))
    urls = _parse_base_urls(base_urls)
    params = ModelParams(temperature=temperature, max_tokens=max_tokens, timeout_s=timeout_s)
    ids = list(models) or list(settings.models)
    if replay:
        ids = [i if i.startswith("replay:") else f"replay:{i}" for i in ids]
    try:
        specs = [ModelSpec(id=i, params=params, base_url=urls.get(i.removeprefix("replay:"))) for i in ids]
    except ValueError as exc:
        fail(f"bad --model: {exc.errors()[0]['input']!r} (expected provider:model)")
    if expression is None:
        expression = bundle.expression_types()[-1]
    spec = RunSpec(
        user_id=user,
        query_id=query,
        expression_type=expression,
        context=context,
        seed=seed,
        method=method,
        method_options={"k": k} if k else {},
        models=specs,
        judges=list(judges) or ([settings.judge] if settings.judge else []),
        force=force,
        replay=replay,
    )
    try:
        plan = workbench.prepare(spec, bundle, workbench.filler_pools())
    except (ContextError, UnknownMethod) as exc:
        fail(str(exc))
    from tui.cli.live_view import LiveView

    view = LiveView(spec, plan, plain=plain or not sys.stdout.isatty())
    recorder = workbench.recorder()

    def emit(event):
        recorder.record(event)
        view.handle(event)

    engine = workbench.engine(emit, judges=_judges(spec, settings))
    try:
        with view:
            run_id = asyncio.run(engine.run(spec, plan, bundle))
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: partial answers are stored as cancelled[/]")
        run_id = view.run_id
    finally:
        recorder.flush()
    view.summary(console)
    console.print(f"stored as run [bold]{run_id}[/] in {workbench.db_path}")


@click.command()
@click.option("--user", default=None, help="Only this user's runs.")
@click.option("--limit", default=30, show_default=True)
@click.pass_obj
def runs(obj, user, limit):
    """List stored runs, newest first."""
    from rich.table import Table

    from storage.runs import list_runs

    _, workbench = open_services(obj, sample_data=False)
    table = Table("run", "created", "user", "query", "E", "context", "method", "models", "status")
    for r in list_runs(workbench.db, user_id=user, limit=limit):
        table.add_row(
            r.id,
            r.created_at,
            r.user_id,
            r.query_id,
            str(r.expression_type or ""),
            r.context,
            r.method,
            ", ".join(r.models),
            r.status,
        )
    console.print(table)


def _judges(spec, settings) -> list:
    from core.judges import JudgeSpecError, judges_for

    try:
        return judges_for(spec, settings)
    except JudgeSpecError as exc:
        fail(f"--judge: {exc}")


def _parse_base_urls(items: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in items:
        model, sep, url = item.partition("=")
        if not sep or not url.startswith(("http://", "https://")):
            fail(f"--base-url takes MODEL=URL, e.g. openai:llama-3=http://127.0.0.1:8000/v1 (got {item!r})")
        out[model] = url
    return out
