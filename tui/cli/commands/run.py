"""`prefscope run USER QUERY`: stream models side by side in the terminal and store the run."""

from __future__ import annotations

import asyncio
import sys

import click
from rich.text import Text

from core.text.terminal_safe import terminal_safe
from tui.cli.command_info import CommandInfo
from tui.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    check_models,
    console,
    ensure_writable,
    exit_for_failures,
    fail,
    open_workbench,
    query_of,
    user_of,
)
from tui.cli.spec_options import PROFILE_HINT, SpecOptions, spec_options, with_profile_hint

COMMAND = CommandInfo(
    name="run",
    help="Stream models side by side for one case and store the run.",
    examples=(
        "prefscope run maya p1-open --model demo:oracle --model openai:gpt-4o-mini",
        "prefscope run maya p1-o --method rag --plain  # p1-o: a unique prefix of p1-open",
    ),
    writes=True,
    order=110,
    details="A rich live view (`--plain`: each answer when it finishes).",
)


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
    from core.run.profile import noted

    workbench = open_workbench(obj)
    bundle = user_of(workbench, user)
    query = query_of(bundle, query).id
    resolved = spec_options.resolve(workbench.settings, bundle)
    spec = spec_options.spec(workbench.settings, bundle, query, resolved)
    check_models(workbench.settings, [m.id for m in spec.models])
    judges = _judges(workbench, spec)
    # Before any call (demo ones too: the run would be lost all the same); --probe: an answer per model, about.
    ensure_writable(workbench, answers=len(spec.models) * (2 if probe else 1))
    try:
        plan = workbench.prepare(spec, bundle, workbench.filler_pools())
    except (ContextError, UnknownMethod) as exc:
        fail(terminal_safe(with_profile_hint(str(exc), resolved)))
    plan = noted(plan, resolved, PROFILE_HINT)  # stored with the run: where its defaults came from
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

    engine = workbench.engine(emit, judges=judges)
    interrupted = False
    not_stored: str | None = None
    try:
        with view:
            run_id = asyncio.run(engine.run(spec, plan, bundle))
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: partial answers are stored as cancelled[/]")
        run_id, interrupted = view.run_id, True
    finally:
        not_stored = _flush(recorder)
    view.summary(console)
    if not_stored is not None:  # why, and the file the answers were saved to instead
        fail(not_stored, EXIT_INTERRUPTED if interrupted else EXIT_FAILED)
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


def _flush(recorder) -> str | None:
    """Wait for the run's writes; the message of those that failed (``AnswersNotStored``: why, how
    many answers, the recovery file they were saved to), or None when all were stored."""
    from app.records import WriterError

    try:
        recorder.flush()
    except WriterError as exc:
        return str(exc)
    return None


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


def _judges(workbench, spec) -> list:
    from core.judges import JudgeSpecError

    try:
        return workbench.judges(spec)
    except JudgeSpecError as exc:
        fail(terminal_safe(f"--judge: {exc}"))
