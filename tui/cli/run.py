"""`prefscope run`: stream models side by side in the terminal and store the run; `prefscope runs`."""

from __future__ import annotations

import asyncio
import sys

import click
from rich.text import Text

from core.text.terminal_safe import terminal_safe
from tui.cli.common import EXIT_INTERRUPTED, console, exit_for_failures, fail, open_workbench, query_of, user_of
from tui.cli.spec_options import SpecOptions, spec_options


@click.command()
@click.argument("user")
@click.argument("query")
@spec_options
@click.option("--plain", is_flag=True, help="No live layout: print each answer when it finishes.")
@click.option(
    "--probe",
    is_flag=True,
    help="Then ask each model the preference's knowledge probes (its MCQ / true-false queries, else a "
    "generated 'what do I prefer…?') in the same context and method, and print each answer's diagnosis.",
)
@click.pass_obj
def run(obj, user: str, query: str, spec_options: SpecOptions, plain: bool, probe: bool) -> None:
    """Stream MODELs on one USER's QUERY side by side and store the run.

    USER and QUERY take a full id or a unique prefix. Exits 1 when every model failed (the
    message names the cause, e.g. the unset key variable), 3 when some did."""
    from core.history.configs import ContextError
    from core.methods import UnknownMethod

    workbench = open_workbench(obj)
    bundle = user_of(workbench, user)
    query = query_of(bundle, query).id
    spec = spec_options.spec(workbench.settings, bundle, query)
    check_models(workbench.settings, [m.id for m in spec.models])
    try:
        plan = workbench.prepare(spec, bundle, workbench.filler_pools())
    except (ContextError, UnknownMethod) as exc:
        fail(terminal_safe(str(exc)))
    from tui.cli.live_view import LiveView

    view = LiveView(spec, plan, plain=plain or not sys.stdout.isatty())
    recorder = workbench.recorder()
    judge_errors: list[str] = []
    judgments = 0

    def emit(event):
        nonlocal judgments
        recorder.record(event)
        view.handle(event)
        judgment = getattr(event, "judgment", None)
        if judgment is not None:
            judgments += 1
            if not judgment.parse_ok:
                judge_errors.append(f"{judgment.judge_model}: {judgment.error}")

    engine = workbench.engine(emit, judges=_judges(workbench, spec))
    interrupted = False
    try:
        with view:
            run_id = asyncio.run(engine.run(spec, plan, bundle))
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: partial answers are stored as cancelled[/]")
        run_id, interrupted = view.run_id, True
    finally:
        recorder.flush()
    view.summary(console)
    console.print(Text.assemble("stored as run ", (str(run_id), "bold"), f" in {workbench.db_path}"))
    if interrupted:
        sys.exit(EXIT_INTERRUPTED)
    if probe:
        try:
            _probe_and_diagnose(workbench, run_id, bundle)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted: the probes answered so far are stored[/]")
            sys.exit(EXIT_INTERRUPTED)
    errors = [
        terminal_safe(f"{c.label}: {c.finished.error if c.finished and c.finished.error else c.status}")
        for c in view.columns
        if c.status != "ok"
    ]
    exit_for_failures("model", errors, len(view.columns))
    exit_for_failures("judgment", [terminal_safe(e) for e in judge_errors], judgments)


def _probe_and_diagnose(workbench, run_id: str, bundle) -> None:
    """Run the knowledge probes of the stored run, then print one diagnosis line per answer."""
    from core.history.configs import ContextError
    from tui.cli.diagnosis_view import answer_line

    specs = workbench.probe_specs(run_id)
    if not specs:
        console.print("[dim]no knowledge probe for this query (not open, or no preference to know)[/]")
    else:
        console.print(f"probing: {', '.join(terminal_safe(s.query_id) for s in specs)} …")
        try:
            probe_ids = asyncio.run(workbench.run_probes(specs, bundle))
        except ContextError as exc:
            fail(f"probe not run: {terminal_safe(str(exc))}")
        console.print(f"stored {len(probe_ids)} probe run(s): {', '.join(probe_ids)}")
    for case, diagnosis, _ in workbench.diagnoses([run_id]):
        console.print(answer_line(case.model, diagnosis))


def check_models(settings, model_ids: list[str]) -> None:
    """One red line naming the known providers for a model id no provider serves (before any work)."""
    from core.providers import check_model_name

    for model_id in model_ids:
        problem = check_model_name(model_id.removeprefix("replay:"), settings)
        if problem:
            fail(terminal_safe(problem))


def user_bundle(workbench, user: str, query: str):
    """The stored user (full id or unique prefix), checked to have the query (one red line otherwise)."""
    bundle = user_of(workbench, user)
    try:
        bundle.query(query)
    except KeyError as exc:
        fail(terminal_safe(str(exc).strip("'\"")))
    return bundle


@click.command()
@click.option("--user", default=None, help="Only this user's runs (full id or unique prefix).")
@click.option("--limit", default=30, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (full ids, every model) instead of a table.")
@click.pass_obj
def runs(obj, user, limit, as_json):
    """List stored runs, newest first.

    The run column shows the full id when the terminal is wide enough, else the unique short form
    (the start of the id's random tail); every command that takes a run id accepts either."""
    import json

    from rich.console import Console
    from rich.table import Table

    from tui.safe_text import safe_text

    workbench = open_workbench(obj, sample_data=False)
    user_id = user_of(workbench, user).user.id if user else None
    rows = workbench.list_runs(user_id=user_id, limit=limit)
    if as_json:
        keys = ("id", "created_at", "user_id", "query_id", "expression_type", "context", "method", "models", "status")
        docs = [{k: getattr(r, k) for k in keys} | {"batch": r.label} for r in rows]
        click.echo(json.dumps(docs, indent=2, ensure_ascii=False))
        return
    out = Console(highlight=False)  # the terminal's width now (COLUMNS included)
    short = out.width < FULL_ID_WIDTH
    shown = workbench.short_run_ids([r.id for r in rows]) if short else {}
    table = Table("run", "created", "user", "query", "E", "context", "method", "models", "status")
    for column in table.columns[:2]:
        column.no_wrap = True  # an id is useful only whole
    for r in rows:
        # Cells as Text: ids and model names are data, never markup.
        cells = (
            shown.get(r.id, r.id),
            r.created_at[:16].replace("T", " ") if not short else r.created_at[5:16].replace("T", " "),
            r.user_id,
            r.query_id,
        )
        cells += (str(r.expression_type or ""), r.context, r.method)
        table.add_row(*(safe_text(c) for c in cells), safe_text(", ".join(r.models)), safe_text(r.status))
    out.print(table)
    if short and rows:
        out.print("[dim]run: short ids, accepted by every command (full ids: a wider terminal or --json)[/]")


#: Terminal width from which `runs` prints full run ids.
FULL_ID_WIDTH = 140


def _judges(workbench, spec) -> list:
    from core.judges import JudgeSpecError

    try:
        return workbench.judges(spec)
    except JudgeSpecError as exc:
        fail(terminal_safe(f"--judge: {exc}"))
