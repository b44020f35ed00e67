"""`prefscope run`: stream models side by side in the terminal and store the run; `prefscope runs`."""

from __future__ import annotations

import asyncio
import sys

import click
from rich.text import Text

from core.text.terminal_safe import terminal_safe
from tui.cli.common import console, fail, open_workbench
from tui.cli.spec_options import SpecOptions, spec_options


@click.command()
@click.argument("user")
@click.argument("query")
@spec_options
@click.option("--plain", is_flag=True, help="No live layout: print each answer when it finishes.")
@click.pass_obj
def run(obj, user: str, query: str, spec_options: SpecOptions, plain: bool) -> None:
    """Stream MODELs on one USER's QUERY side by side and store the run."""
    from core.history.configs import ContextError
    from core.methods import UnknownMethod

    workbench = open_workbench(obj)
    bundle = user_bundle(workbench, user, query)
    spec = spec_options.spec(workbench.settings, bundle, query)
    try:
        plan = workbench.prepare(spec, bundle, workbench.filler_pools())
    except (ContextError, UnknownMethod) as exc:
        fail(terminal_safe(str(exc)))
    from tui.cli.live_view import LiveView

    view = LiveView(spec, plan, plain=plain or not sys.stdout.isatty())
    recorder = workbench.recorder()

    def emit(event):
        recorder.record(event)
        view.handle(event)

    engine = workbench.engine(emit, judges=_judges(workbench, spec))
    try:
        with view:
            run_id = asyncio.run(engine.run(spec, plan, bundle))
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: partial answers are stored as cancelled[/]")
        run_id = view.run_id
    finally:
        recorder.flush()
    view.summary(console)
    console.print(Text.assemble("stored as run ", (str(run_id), "bold"), f" in {workbench.db_path}"))


def user_bundle(workbench, user: str, query: str):
    """The stored user, checked to have the query (one red line otherwise)."""
    try:
        bundle = workbench.user(user)
        bundle.query(query)
    except (LookupError, KeyError) as exc:
        fail(terminal_safe(str(exc).strip("'\"")))
    return bundle


@click.command()
@click.option("--user", default=None, help="Only this user's runs.")
@click.option("--limit", default=30, show_default=True)
@click.pass_obj
def runs(obj, user, limit):
    """List stored runs, newest first."""
    from rich.table import Table

    from tui.safe_text import safe_text

    workbench = open_workbench(obj, sample_data=False)
    table = Table("run", "created", "user", "query", "E", "context", "method", "models", "status")
    for r in workbench.list_runs(user_id=user, limit=limit):
        # Cells as Text: ids and model names are data, never markup.
        cells = (r.id, r.created_at, r.user_id, r.query_id, str(r.expression_type or ""), r.context, r.method)
        table.add_row(*(safe_text(c) for c in cells), safe_text(", ".join(r.models)), safe_text(r.status))
    console.print(table)


def _judges(workbench, spec) -> list:
    from core.judges import JudgeSpecError

    try:
        return workbench.judges(spec)
    except JudgeSpecError as exc:
        fail(terminal_safe(f"--judge: {exc}"))
