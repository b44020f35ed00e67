"""`prefscope judge RUN…`: re-judge stored runs' final answers without regenerating them.

A thin view: it loads what is stored, calls ``core.judges`` through the provider layer, stores the
judgments through the workbench (:mod:`app`) and prints rich tables.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import click
from rich.table import Table

from tui.cli.cells import score_cell, short_cell
from tui.cli.command_info import CommandInfo
from tui.cli.common import console, ensure_writable, exit_for_failures, fail, open_workbench, run_id_of
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="judge",
    help="Re-judge stored runs (ids or a --label) without regenerating.",
    examples=(
        "prefscope judge 3e59b2be --judge demo:heuristic --dry-run",
        "prefscope judge --label 'imported:single_pref_remind/*' --judge demo:heuristic  # every imported answer",
    ),
    writes=True,
    order=130,
)


def _model_kinds() -> list[str]:
    """The registry's per-response LLM judge kinds (``<kind>:<provider>:<model>``)."""
    from core.judges import JUDGES

    return [k.name for k in JUDGES.values() if k.needs_model and k.per_response]


def _judge_help() -> str:
    """--judge's help, from the judge registry (every installed benchmark's judges included)."""
    from core.judges import JUDGES

    free = [k.name for k in JUDGES.values() if not k.needs_model and k.per_response]
    return (
        f"{' | '.join(free)} (no model call) | <kind>:<provider>:<model> with <kind> one of "
        f"{', '.join(_model_kinds())} (repeatable; default: the configured judge). "
        "`prefscope benchmarks` describes each."
    )


@click.command()
@click.argument("run_ids", nargs=-1)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="Also judge every run with this label: a batch name, or imported:<file>; * matches any text (repeatable).",
)
@click.option("--judge", "judges", multiple=True, help=_judge_help())
@click.option(
    "--kind",
    type=click.Choice(_model_kinds()),
    help="With --judge MODEL_ID: shorthand for --judge KIND:MODEL_ID.",
)
@click.option(
    "--judge-repeats",
    "repeats",
    type=click.IntRange(1, 20),
    default=1,
    show_default=True,
    help="Judge every answer this many times (all kept) and print each judge's test–retest agreement.",
)
@click.option("--dry-run", is_flag=True, help="Print the judgments without storing them.")
@click.pass_obj
def judge(obj, run_ids, labels, judges, kind, repeats, dry_run):
    """Re-judge the final answers of the stored runs RUN_IDS (full ids or unique prefixes) and of
    every run with a --label, without regenerating them. One run: every judgment is listed; several:
    one line per run. Exits 1 when every judgment failed, 3 when some did."""
    from core.judges import JudgeSpecError
    from tui.cli.common import check_models

    wb = open_workbench(obj, sample_data=False)
    settings = wb.settings
    ids = [run_id_of(wb, r) for r in run_ids]
    labelled = wb.run_ids_labelled(list(labels))
    if labels and not labelled:
        fail(f"no stored run has the label {', '.join(map(repr, labels))} (see `prefscope runs`)")
    ids += [r for r in labelled if r not in ids]
    if not ids:
        fail("name a run (an id or unique prefix) or --label LABEL; `prefscope runs` lists them")
    names = [f"{kind}:{j}" if kind else j for j in judges] or ([settings.judge] if settings.judge else [])
    if not names:
        fail("no judge given: pass --judge demo:heuristic or --judge rubric:<provider>:<model>")
    try:
        chosen = wb.judges(names)
    except JudgeSpecError as exc:
        fail(str(exc))
    check_models(settings, [s.id for j in chosen if (s := getattr(j, "spec", None)) is not None])
    if not dry_run:
        ensure_writable(wb)
    errors: list[str] = []
    total = 0
    kinds: set[str] = set()
    for run_id in ids:
        results = _judge_run(wb, run_id, chosen, dry_run, verbose=len(ids) == 1 and repeats == 1, repeats=repeats)
        total += len(results)
        kinds |= {j.kind for _, j in results}
        errors += [safe_text(f"{run_id} {j.judge_model}: {j.error}").plain for _, j in results if not j.parse_ok]
    if len(ids) > 1:
        stored = "not stored (--dry-run)" if dry_run else "stored"
        console.print(f"{total} judgments of {len(ids)} runs {stored}; {len(errors)} parse/call failures")
    if repeats > 1 and not dry_run:
        _print_retest(wb, ids, sorted(kinds))
    exit_for_failures("judgment", errors, total)


def _print_retest(wb, run_ids: list[str], kinds: list[str]) -> None:
    """Each judge's agreement with itself over the runs just judged (every stored judging counts)."""
    from app.reports import RunFilter, retest_table
    from tui.cli.report_view import rich_table

    f = RunFilter(run_ids=list(run_ids))
    for kind in kinds:
        table = retest_table(wb.db, kind, f)
        if table.rows:
            console.print(rich_table(table, fit=console.width))


def _judge_run(wb, run_id: str, chosen, dry_run: bool, *, verbose: bool, repeats: int = 1) -> list:
    """Judge one stored run's finished answers; the table (one run) or a line (several)."""
    from core.judges.aggregate import source_of

    run = wb.load_run(run_id)
    try:
        bundle = wb.user(run.spec.user_id)
        query = bundle.query(run.spec.query_id)
    except (LookupError, KeyError) as exc:
        fail(f"cannot rebuild the case of run {run_id}: {str(exc).strip(chr(39))} (was the user re-imported?)")
    finals = [r for r in run.final_responses() if r.status == "ok"]
    if not finals:
        if verbose:
            fail(f"run {run_id} has no finished answer to judge")
        console.print(safe_text(f"{run_id}: no finished answer to judge, skipped"))
        return []
    results = []
    for i in range(repeats):  # a judging again is a new call; each is stored, marked with its number
        got = asyncio.run(wb.judge_responses(chosen, run, finals, bundle, query))
        results += got if repeats == 1 else [(rid, replace(j, extra={**j.extra, "judge_repeat": i})) for rid, j in got]
    if not dry_run:
        wb.save_judgments(run_id, results)
    failed = sum(1 for _, j in results if not j.parse_ok)
    if not verbose:
        scores = ", ".join(f"{j.dimension} {score_cell(j.score)}" for _, j in results if j.parse_ok)
        console.print(
            safe_text(f"{run_id}: {short_cell(scores, 70) or '—'}" + (f" ({failed} failed)" if failed else ""))
        )
        return results
    table = Table("model", "judge", "kind", "dimension", "score", "ok", "rationale / error", title=f"run {run_id}")
    models = {r.id: r.model for r in finals}
    for response_id, j in results:
        tag = "" if source_of(j) == "llm" else f" [{source_of(j)}]"  # heuristic / parser: no LLM judge
        table.add_row(
            safe_text(models[response_id]),
            safe_text(j.judge_model + tag),
            safe_text(j.kind),
            safe_text(j.dimension),
            score_cell(j.score),
            "yes" if j.parse_ok else "[red]no[/]",
            safe_text(short_cell(j.rationale if j.parse_ok else j.error)),
        )
    console.print(table)
    stored = "not stored (--dry-run)" if dry_run else "stored"
    console.print(f"{len(results)} judgments {stored}; {failed} parse/call failures (kept with their raw output)")
    return results
