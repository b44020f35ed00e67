"""`prefscope batch --via openai-batch|anthropic-batch`: the grid through a provider's batch API.

Submits what is left as jobs, then waits (polling with a growing interval) and stores each job's
answers when it ends. Ctrl+C stops waiting, not the jobs: they keep running at the provider, and
the same command, run again by any process, collects them. ``--no-wait`` submits and returns;
``--cancel`` cancels the batch's jobs at the provider and stores what they finished.
"""

from __future__ import annotations

import asyncio

import click
from rich.console import Console
from rich.text import Text

from app.batch import BatchSession, BatchSetupError
from core.providers.batch_api import Via
from core.run.provider_batch import JobProgress, PollPolicy
from tui.cli.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_PARTIAL, stoppable
from tui.safe_text import safe_text


def run_via(
    ctx: click.Context,
    console: Console,
    session: BatchSession,
    via: Via,
    *,
    wait: bool,
    cancel: bool,
    poll_max_s: float,
) -> None:
    from app.provider_batch import provider_batch
    from tui.cli.batch_view import summary_line, summary_table

    last: dict[str, str] = {}

    def on_progress(p, jobs: JobProgress) -> None:
        for job_id, state in jobs.states.items():
            line = f"{state.status}" + (f" ({state.counts})" if state.counts else "")
            if last.get(job_id) != line:
                last[job_id] = line
                console.print(safe_text(f"job {job_id}: {line}"))

    try:
        runner = provider_batch(
            session, via, poll=PollPolicy(first_s=min(2.0, poll_max_s), max_s=poll_max_s), on_progress=on_progress
        )
    except BatchSetupError as exc:
        raise click.ClickException(str(exc)) from None
    waiting = runner.job_store.open_jobs(session.name)
    if waiting:
        n = sum(len(j.requests) for j in waiting)
        console.print(f"{len(waiting)} {via} job(s) of this batch not collected yet ({n:,} requests): checking them")
    if cancel:
        states = asyncio.run(stoppable(runner.cancel_open, runner.stop))
        console.print(f"asked the provider to cancel {len(states)} job(s); what they finished is stored")
    else:
        with console.status(f"submitting to {via} and waiting for the jobs…" if wait else f"submitting to {via}…"):
            asyncio.run(stoppable(lambda: runner.run(wait=wait), runner.stop))
        for job_id in runner.jobs.submitted_jobs:
            console.print(safe_text(f"submitted {via} job {job_id}"))
    progress = session.finish()
    console.print(summary_line(session.name, progress))
    console.print(summary_table(session.workbench, session.name, console.width))
    for err in progress.errors[:5]:
        console.print(Text.assemble(("  error ", "red"), safe_text(err)))
    left = runner.job_store.open_jobs(session.name)
    if left:
        n = sum(len(j.requests) for j in left)
        console.print(
            f"{len(left)} job(s) with {n:,} requests still run at the provider: run the same command again to "
            "collect them (any process, any time within the jobs' 24 h), or add --cancel to cancel them"
        )
        if runner.jobs.unreadable:
            ctx.exit(EXIT_FAILED)
        if progress.stopped:
            ctx.exit(EXIT_INTERRUPTED)
        return
    if progress.failed and not progress.ok:
        ctx.exit(EXIT_FAILED)
    if progress.failed:
        ctx.exit(EXIT_PARTIAL)
