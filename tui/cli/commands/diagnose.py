"""`prefscope diagnose`: why each answer of stored runs failed (find → know → apply)."""

from __future__ import annotations

import click

from tui.cli.command_info import CommandInfo
from tui.cli.common import ensure_writable, fail, open_workbench, run_id_of, unpaced_demo_models

COMMAND = CommandInfo(
    name="diagnose",
    help="Why each answer failed: not in context, not retrieved, not known, or not applied.",
    examples=("prefscope diagnose 3e59b2be --probe --steps", "prefscope diagnose --batch mybatch --json"),
    writes=True,
    order=170,
)


@click.command()
@click.argument("run_ids", nargs=-1)
@click.option("--batch", "labels", multiple=True, help="Every answer of this batch (repeatable).")
@click.option("--probe", is_flag=True, help="First run the knowledge probes of runs that have none (calls the models).")
@click.option("--steps", is_flag=True, help="Under each answer, every step with its evidence.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: one object per answer with its steps.")
@click.pass_obj
def diagnose(obj, run_ids, labels, probe, steps, as_json) -> None:
    """One line per answer of RUN(s): model, diagnosis label and the evidence that decided it.

    Labels: not in context · not retrieved · not known · known, not applied · misapplied (a
    restraint query's answer that drags the preference in) · applied · undetermined (what is
    missing). Read from stored rows only: the run, its judgments, the runs
    probing it (`--probe`, or `prefscope run --probe`) and the stored user's gold evidence."""
    import asyncio
    import json

    from app.reports import RunFilter

    if not run_ids and not labels:
        fail("name runs (ids or unique prefixes) or --batch NAME; see `prefscope runs`")
    workbench = open_workbench(obj, sample_data=False, readonly=not probe)
    unpaced_demo_models(workbench)
    try:
        ids = [run_id_of(workbench, r) for r in run_ids]
        if labels:
            ids += workbench.answer_run_ids(RunFilter(labels=list(labels)))
            if not ids:
                fail(f"no runs in batch {', '.join(labels)} (see `prefscope runs`)")
        if probe:
            ensure_writable(workbench)
            _probe_missing(workbench, ids, asyncio.run)
        # Streamed: one run's plan in memory at a time, each answer printed as it is diagnosed.
        results = workbench.iter_diagnoses(list(dict.fromkeys(ids)))
        if as_json:
            docs = [
                {
                    "run_id": c.run_id,
                    "response_id": c.response_id,
                    "model": c.model,
                    "query_id": c.query_id,
                    "label": d.label,
                    "reason": d.reason(),
                    "steps": [{"name": s.name, "status": s.status, "evidence": s.evidence} for s in d.steps],
                    "notes": list(d.notes),
                }
                for c, d, _ in results
            ]
            click.echo(json.dumps(docs, indent=2, ensure_ascii=False))
            return
        _print_diagnoses(results, steps)
    finally:
        workbench.close()


def _print_diagnoses(results, steps: bool) -> None:
    """One dim line per run, then one line per answer: its label and reason (or its four steps)."""
    from rich.console import Console

    from tui.cli.diagnosis_view import answer_line
    from tui.diagnosis_style import label_text
    from tui.safe_text import safe_text

    console = Console(highlight=False)
    last_run = None
    for case, diagnosis, _ in results:
        if case.run_id != last_run:
            console.print(safe_text(f"{case.run_id}  {case.query_id}  {case.method} · {case.context}", style="dim"))
            last_run = case.run_id
        if steps:
            console.print(answer_line(case.model, diagnosis))
            continue
        line = safe_text(f"  {case.model}  ", style="bold")
        line.append_text(label_text(diagnosis))
        line.append("  ")
        line.append_text(safe_text(diagnosis.reason()))
        console.print(line)
    if last_run is None:
        console.print("no final answers in these runs")


def _probe_missing(workbench, run_ids: list[str], run) -> None:
    """Probe every run that has no probe run yet (open queries with a preference only). A run
    that cannot be probed (its user gone, a prompt past a window) is named and skipped."""
    from rich.console import Console

    from core.history.configs import ContextError
    from core.text.terminal_safe import terminal_safe

    have = workbench.probe_run_ids(run_ids)
    for run_id in run_ids:
        if have[run_id]:
            continue
        try:
            specs = workbench.probe_specs(run_id)
            if specs:
                run(workbench.run_probes(specs, workbench.user(specs[0].user_id)))
        except (ContextError, LookupError) as exc:
            message = terminal_safe(f"{run_id}: not probed: {exc}")
            Console(stderr=True, highlight=False).print(message, style="yellow", markup=False)
    workbench.flush()
