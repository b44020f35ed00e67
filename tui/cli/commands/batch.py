"""`prefscope batch`: run a grid of cases with bounded concurrency, resumably.

Axes come from ``--grid grid.toml`` (format in :mod:`core.run.grid`) and/or flags; a flag given on
the command line replaces that axis of the file. Before starting it prints a token and cost
estimate and asks for confirmation above ``--confirm-above-usd`` / ``--confirm-above-tokens``
(``--yes`` skips; with a non-interactive stdin it refuses instead of asking). Ctrl-C stops
cleanly: runs in flight are stored as cancelled with their partial text and re-run on resume.
Running the same command again resumes: finished cells are skipped; ``--retry-failed`` also
re-runs failed ones.
"""

from __future__ import annotations

import asyncio
import sys

import click

from tui.cli.command_info import CommandInfo
from tui.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_PARTIAL,
    open_workbench,
    stoppable,
    unpaced_demo_models,
    user_ids_of,
)

COMMAND = CommandInfo(
    name="batch",
    help="Run a grid of cases with bounded concurrency (resumable).",
    examples=(
        "prefscope batch --user maya --query-kind open --model demo:oracle --model demo:generic --dry-run",
        "prefscope batch --grid grid.toml --retry-failed --yes",
    ),
    writes=True,
    order=180,
    details="Streamed, or through the providers' batch APIs (`--via openai-batch` / `anthropic-batch`).",
)

CONFIRM_USD = 1.0
CONFIRM_TOKENS = 5_000_000


def _grid(
    grid_path,
    name,
    users,
    queries,
    kinds,
    expressions,
    contexts,
    turns,
    methods,
    models,
    seeds,
    judges,
    k,
    runs,
    per_provider,
):
    from core.run.grid import GridError, load_grid, parse_grid

    if grid_path:  # checked before the read: a FIFO blocks it, /dev/zero never ends
        from pathlib import Path

        from core.formats import FormatError
        from core.formats.reading import check_size

        try:  # the import's size limit (max_import_mb's default) and its special-file refusal
            check_size(Path(grid_path), source=str(grid_path))
        except FormatError as exc:
            raise click.ClickException(str(exc)) from None
    try:
        base = load_grid(grid_path).model_dump() if grid_path else {}
    except GridError as exc:
        raise click.ClickException(str(exc)) from None
    flags = {
        "name": name,
        "users": list(users),
        "queries": list(queries),
        "query_kinds": list(kinds),
        "expression_types": list(expressions),
        "contexts": list(contexts),
        "turns": list(dict.fromkeys(turns)),
        "methods": list(methods),
        "models": list(models),
        "seeds": list(seeds),
        "judges": list(judges),
    }
    data = {**base, **{key: v for key, v in flags.items() if v}}
    if turns:
        data["contexts"] = _contexts_for_turns(data.get("contexts"), given=bool(contexts))
    if k is not None:
        data.setdefault("method_options", {})["k"] = k
    conc = dict(data.get("concurrency") or {})
    if runs is not None:
        conc["runs"] = runs
    if per_provider is not None:
        conc["per_provider"] = per_provider
    data["concurrency"] = conc
    if not data.get("models"):
        raise click.ClickException("no models: pass --model (e.g. --model demo:generic) or list models in --grid")
    try:
        return parse_grid(data, "invalid grid")
    except GridError as exc:
        raise click.ClickException(str(exc)) from None


def _contexts_for_turns(contexts: list[str] | None, *, given: bool) -> list[str]:
    """The contexts a ``--turns`` sweep runs in: the ones given (flag, else the grid file), at
    least one of which must take turns; none given: PrefEval's ``prefeval-turns``."""
    from core.history.configs import CONFIGS
    from core.run.profile import takes_turns

    if not contexts:
        return ["prefeval-turns"]
    if not any(takes_turns(c) for c in contexts):
        names = " or ".join(c.name for c in CONFIGS.values() if c.takes_turns)
        where = "--context" if given else "the grid file's contexts"
        raise click.ClickException(
            f"--turns goes with --context {names} (got {where}: {', '.join(contexts)}); "
            "add --context prefeval-turns, or leave --context out"
        )
    return contexts


def _sweep(grid, depths, repeats, temperature):
    """The grid with the command line's depth axis, repeats and temperature (they replace the file's);
    the temperature goes to every model, their own included."""
    update: dict = {}
    if depths:
        update["evidence_depths"] = list(dict.fromkeys(depths))
    if repeats is not None:
        update["repeats"] = repeats
    if temperature is not None:
        from core.run.grid import with_temperature

        update["temperature"] = temperature
        update["models"] = [with_temperature(m, temperature, override=True) for m in grid.models]
    return grid.model_copy(update=update) if update else grid


def _repeats_line(grid) -> str:
    temps = sorted({m.params.temperature for m in grid.models}, key=lambda t: (t is None, t or 0))
    shown = ", ".join("the model's default" if t is None else f"{t:g}" for t in temps)
    line = f"{grid.repeats} answers per cell at temperature {shown}"
    if all(not t for t in temps):
        line += " (at 0 or the default, repeats measure only what the provider varies on its own)"
    return line + "; `prefscope report` shows per-item variance and verdict flip rates"


def _write_failure_lines(session, progress) -> list:
    """What became of the writes that failed: why (a full disk is not a lock), which cells run
    again, and the file the lost answers were saved to."""
    from rich.text import Text

    from core.text.terminal_safe import terminal_safe

    if progress.unstored:
        n = progress.unstored
        return [
            Text.assemble(
                (f"{n} answer{'s' * (n != 1)} {'were' if n != 1 else 'was'} not stored", "red"),
                terminal_safe(f" ({session.unstored_note()}); resuming with the same command runs their cells again"),
            )
        ]
    if session.write_error is not None:  # answers stored; a status or score write failed
        return [Text(terminal_safe(f"{session.write_error}; resuming settles their cells"), style="yellow")]
    return []


def _confirm(est, yes: bool, usd: float, tokens: int) -> None:
    # Tokens matter when their price is unknown; priced tokens are covered by the dollar threshold.
    big = (est.cost_usd or 0) > usd or est.unpriced_tokens > tokens
    if not big or yes:
        return
    if not sys.stdin.isatty():
        raise click.ClickException(
            f"the batch is above the confirmation threshold (${usd:g}, or {tokens:,} tokens to unpriced models) "
            "and stdin is not "
            "interactive; re-run with --yes to start it"
        )
    click.confirm("Start this batch?", abort=True, err=True)


@click.command("batch")
@click.option("--grid", "grid_path", type=click.Path(exists=True, dir_okay=False), help="Grid TOML file.")
@click.option(
    "--name", default=None, help="Batch name (resume key). Default: the grid file's stem or a hash of the cells."
)
@click.option(
    "--user",
    "users",
    multiple=True,
    help="User id, unique prefix or pattern such as 'prefeval-*' (repeatable; default every user; "
    "grid files' users take patterns too).",
)
@click.option(
    "--query",
    "queries",
    multiple=True,
    help="Query id or pattern such as '*-restraint' (repeatable; default every query except generated restraint "
    "probes, which run when named).",
)
@click.option(
    "--query-kind", "kinds", multiple=True, type=click.Choice(["open", "mcq", "tf"]), help="Only these query kinds."
)
@click.option(
    "--expression", "expressions", multiple=True, type=click.IntRange(1, 4), help="Expression type 1-4 (repeatable)."
)
@click.option("--context", "contexts", multiple=True, help="Context configuration (repeatable).")
@click.option(
    "--turns",
    "turns",
    multiple=True,
    type=click.IntRange(0),
    help="prefeval-turns context: N inter turns of PrefEval's pool after the preference, PrefEval's main axis "
    "(repeatable: a sweep, e.g. --turns 0 --turns 10 --turns 100; without --context it sets --context "
    "prefeval-turns; grid file: turns = [...]).",
)
@click.option("--method", "methods", multiple=True, help="Prompting method (repeatable).")
@click.option("--model", "models", multiple=True, help="Model id (repeatable), e.g. demo:generic.")
@click.option("--seed", "seeds", multiple=True, type=int, help="Seed (repeatable).")
@click.option("--judge", "judges", multiple=True, help="Judge (repeatable).")
@click.option(
    "--filler-pool", "filler_pools", multiple=True, help="Filler pool id (repeatable; default: each user's own)."
)
@click.option(
    "--evidence-depth",
    "depths",
    multiple=True,
    type=click.FloatRange(0, 1),
    help="Position sweep: gold evidence at this depth of the history, 0 = first … 1 = just before the question "
    "(repeatable; grid file: evidence_depth = [...]).",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 100),
    default=None,
    help="Answers per cell (default 1): per-item variance and verdict flip rates in `prefscope report`.",
)
@click.option(
    "--temperature",
    type=click.FloatRange(0),
    default=None,
    help="Sampling temperature of every model (recorded with each answer).",
)
@click.option("--k", type=int, default=None, help="RAG: retrieved turns.")
@click.option("--runs", type=click.IntRange(1, 1024), default=None, help="Runs in flight at once (default 8).")
@click.option(
    "--per-provider", type=click.IntRange(1, 1024), default=None, help="Model calls in flight per provider (default 4)."
)
@click.option(
    "--probe",
    is_flag=True,
    help="After each cell, ask its models the preference's knowledge probes (same context and method), "
    "for `prefscope diagnose` / `report --diagnosis` (grid file: probe = true).",
)
@click.option(
    "--via",
    type=click.Choice(["stream", "openai-batch", "anthropic-batch"]),
    default="stream",
    show_default=True,
    help="How answers are obtained: streamed calls, or the provider's batch API (half price, within 24 h; "
    "one call per answer; resumable by any process).",
)
@click.option(
    "--no-wait", is_flag=True, help="--via …-batch: submit the jobs and return; the same command later collects them."
)
@click.option(
    "--cancel", is_flag=True, help="--via …-batch: cancel this batch's jobs at the provider, store what they finished."
)
@click.option(
    "--poll-max-s",
    type=click.FloatRange(0.01),
    default=60.0,
    show_default=True,
    help="--via …-batch: longest wait between polls of a job (the interval grows up to it).",
)
@click.option("--retry-failed", is_flag=True, help="Also re-run cells that failed before.")
@click.option("--dry-run", is_flag=True, help="Print the cells and the estimate, run nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--confirm-above-usd", type=float, default=CONFIRM_USD, show_default=True, help="Ask above this estimated cost."
)
@click.option(
    "--confirm-above-tokens",
    type=int,
    default=CONFIRM_TOKENS,
    show_default=True,
    help="Ask above this many tokens going to models without a known price.",
)
@click.pass_context
def batch(
    ctx: click.Context,
    grid_path,
    name,
    users,
    queries,
    kinds,
    expressions,
    contexts,
    turns,
    methods,
    models,
    seeds,
    judges,
    filler_pools,
    depths,
    repeats,
    temperature,
    k,
    runs,
    per_provider,
    probe,
    via,
    no_wait,
    cancel,
    poll_max_s,
    retry_failed,
    dry_run,
    yes,
    confirm_above_usd,
    confirm_above_tokens,
) -> None:
    """Run a grid of cases (users × queries × expressions × contexts × methods × models).

    Exits 1 when every cell failed (or answers could not be stored), 3 when some cells failed,
    130 when stopped with Ctrl+C; re-running the same command resumes."""
    from rich.console import Console
    from rich.text import Text

    from app.batch import BatchSetupError, open_batch
    from tui.cli.batch_view import estimate_table, progress_view, summary_line, summary_table
    from tui.cli.common import check_models

    if via == "stream" and (no_wait or cancel):
        raise click.ClickException(
            "--no-wait and --cancel are for provider batch jobs: add --via openai-batch or anthropic-batch"
        )
    grid = _grid(
        grid_path,
        name,
        users,
        queries,
        kinds,
        expressions,
        contexts,
        turns,
        methods,
        models,
        seeds,
        judges,
        k,
        runs,
        per_provider,
    )
    console = Console(stderr=True)
    view = progress_view(console)
    if filler_pools:
        grid = grid.model_copy(update={"filler_pools": sorted(set(filler_pools))})
    if probe:
        grid = grid.model_copy(update={"probe": True})
    grid = _sweep(grid, depths, repeats, temperature)
    workbench = open_workbench(ctx.obj, sample_data=False)
    unpaced_demo_models(workbench)
    if grid.users != "*":  # full ids, unique prefixes or patterns (prefeval-*), like every command
        grid = grid.model_copy(update={"users": user_ids_of(workbench, grid.users)})
    check_models(workbench.settings, [m.id for m in grid.models])
    try:
        workbench.check_filler_pools(grid.filler_pools)
        session = open_batch(workbench, grid, retry_failed=retry_failed, on_progress=view.update, owns_workbench=True)
    except (BatchSetupError, LookupError) as exc:
        workbench.close()
        raise click.ClickException(str(exc)) from None
    try:
        with console.status("building prompt plans for the estimate…"):
            est = asyncio.run(session.estimate())
        todo, skipped = session.runner.plan()
        console.print(estimate_table(session.name, len(session.cells), len(todo), len(skipped), est))
        if grid.repeats > 1:
            console.print(_repeats_line(grid))
        if via != "stream" and not dry_run:
            from tui.cli.batch_via import run_via

            if todo and not cancel:
                _confirm(est, yes, confirm_above_usd, confirm_above_tokens)
            run_via(ctx, console, session, via, wait=not no_wait, cancel=cancel, poll_max_s=poll_max_s)
            return
        if dry_run or not todo:
            if not todo:
                console.print(
                    "nothing to do: every cell is done"
                    + ("" if retry_failed else " (failed cells are kept; --retry-failed re-runs them)")
                )
            return
        _confirm(est, yes, confirm_above_usd, confirm_above_tokens)
        with view:
            asyncio.run(stoppable(session.run, session.stop))
        progress = session.finish()  # every write waited for: the summary says what is stored
        console.print(summary_line(session.name, progress))
        console.print(summary_table(session.workbench, session.name, console.width))
        if progress.elsewhere:
            console.print(f"{progress.elsewhere} cells were taken by another process running this batch")
        for line in _write_failure_lines(session, progress):
            console.print(line)
        for err in progress.errors[:5]:
            console.print(Text.assemble(("  error ", "red"), err))
        if progress.stopped:
            ctx.exit(EXIT_INTERRUPTED)
        if progress.unstored or (progress.failed and not progress.ok):
            ctx.exit(EXIT_FAILED)
        if progress.failed:
            ctx.exit(EXIT_PARTIAL)  # some cells failed, the rest are stored
    finally:
        session.close()
