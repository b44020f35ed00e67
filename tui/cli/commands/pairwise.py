"""`prefscope pairwise RUN_A RUN_B --judge MODEL`: InterPref pass and win rate for two runs.

Run A asked a question for a user holding preference p, run B the same question for a user
holding the opposed preference p^d. For every model answering in both runs, the judge must tell
which answer was written for which preference in all 4 orders (pass); for every two such models,
it compares their answer pairs in both presentation orders (win). Judgments are stored under run
A's answers (``kind = pairwise``), so `prefscope report --interpref` shows pass rates and
Bradley–Terry coefficients.
"""

from __future__ import annotations

import asyncio

import click

from tui.cli.command_info import CommandInfo
from tui.cli.common import console, ensure_writable, exit_for_failures, fail, open_workbench, run_id_of
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="pairwise",
    help="InterPref pass and win rate for two runs with opposed preferences.",
    examples=(
        "prefscope pairwise 3e59b2be 9c01d4aa --judge openai:gpt-4o-mini",
        "prefscope pairwise 3e59b2be 9c01d4aa --judge anthropic:claude-3-5-haiku-latest",
    ),
    writes=True,
    order=160,
)


@click.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--judge", "judge_model", required=True, help="Judge model id, e.g. openai:gpt-4o-mini.")
@click.pass_obj
def pairwise(obj, run_a, run_b, judge_model):
    """Pass (4 swapped orders) and win rate for two runs with opposed preferences (run ids: full or
    a unique prefix). Exits 1 when every judgment failed, 3 when some did."""
    from rich.table import Table

    from core.judges import JUDGES
    from tui.cli.common import check_models

    wb = open_workbench(obj, sample_data=False)
    run_a, run_b = run_id_of(wb, run_a), run_id_of(wb, run_b)
    a, b = wb.load_run(run_a), wb.load_run(run_b)
    check_models(wb.settings, [judge_model])
    pref_a, pref_b = _preference(wb, a), _preference(wb, b)
    query = wb.user(a.spec.user_id).query(a.spec.query_id).text
    answers_a = {r.model: r for r in a.final_responses() if r.status == "ok"}
    answers_b = {r.model: r for r in b.final_responses() if r.status == "ok"}
    models = [m for m in answers_a if m in answers_b]
    if not models:
        fail("no model answered successfully in both runs; pairwise needs the same model in each")
    judge = JUDGES.load("pairwise")(judge_model)  # the pairwise judge kind, wherever it is registered
    texts = {m: (answers_a[m].text, answers_b[m].text) for m in models}
    ensure_writable(wb)
    passes, pairs, wins = asyncio.run(judge.judge_runs(query, pref_a, pref_b, texts, wb.complete()))
    items = []
    for model, judgments in zip(models, passes):
        items += [(answers_a[model].id, _with_pair(j, run_b, model)) for j in judgments]
    for (x, _), judgments in zip(pairs, wins):
        items += [(answers_a[x].id, _with_pair(j, run_b, x)) for j in judgments]
    wb.save_judgments(run_a, items)

    table = Table("model", "orders right", "pass", "note")
    for model, judgments in zip(models, passes):
        summary = judgments[-1]
        orders = summary.extra.get("orders", [])
        table.add_row(
            safe_text(model),
            f"{sum(1 for o in orders if o)} / 4",
            "—" if summary.score is None else ("yes" if summary.score == 1.0 else "no"),
            safe_text(summary.error or summary.rationale),
        )
    console.print(table)
    for (x, y), judgments in zip(pairs, wins):
        scores = [j.score for j in judgments if j.score is not None]
        shown = f"{sum(scores) / len(scores):.2f}" if scores else "undecided"
        console.print(safe_text(f"win rate {x} vs {y}: {shown} (both presentation orders)"))
    console.print(f"stored {len(items)} judgments under run {run_a}; see `prefscope report --interpref`")
    errors = [safe_text(f"{j.judge_model}: {j.error}").plain for _, j in items if not j.parse_ok]
    exit_for_failures("judgment", errors, len(items))


def _preference(wb, run) -> str:
    bundle = wb.user(run.spec.user_id)
    query = bundle.query(run.spec.query_id)
    if query.preference_id:
        return bundle.preference(query.preference_id).text
    if query.gold_preference:
        return query.gold_preference
    fail(f"run {run.id}: its query has no target preference to compare")


def _with_pair(judgment, run_b: str, model: str):
    from dataclasses import replace

    return replace(judgment, extra={**judgment.extra, "pair_run": run_b, "model": model})
