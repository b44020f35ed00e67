"""`prefscope relevance RUN`: which attributes and retrieved turns were relevant to a run's query,
every decider side by side, and how far each agrees with the reference.

A thin view: ``core.analysis.relevance`` decides, the workbench (:mod:`app`) stores and reads.
"""

from __future__ import annotations

import click
from rich.table import Table

from tui.cli.cells import score_cell, short_cell
from tui.cli.command_info import CommandInfo
from tui.cli.common import console, ensure_writable, fail, open_workbench, run_id_of
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="relevance",
    help="Show relevance decisions for a run.",
    examples=(
        "prefscope relevance 3e59b2be --no-embedding",
        "prefscope relevance 3e59b2be --model openai:gpt-4o-mini",
    ),
    writes=True,
    order=150,
)


@click.command()
@click.argument("run_id")
@click.option("--model", help="Also ask this LLM (provider:model) for each target.")
@click.option(
    "--attributes",
    "attr_source",
    default="latest",
    show_default=True,
    help="Attribute targets: latest (extraction, else gold), gold, none, or an extraction id.",
)
@click.option("--no-embedding", is_flag=True, help="Skip the embedding decider (no torch).")
@click.option("--recompute", is_flag=True, help="Decide again even if decisions are stored.")
@click.option("--reference", type=click.Choice(["gold", "human"]), default="gold", show_default=True)
@click.pass_obj
def relevance(obj, run_id, model, attr_source, no_embedding, recompute, reference):
    """Relevance of attributes and retrieved turns for RUN_ID's query: every decider side by side."""
    from app.errors import UnknownExtraction
    from core.analysis import relevance as rel
    from tui.cli.common import check_models

    wb = open_workbench(obj, sample_data=False)
    run_id = run_id_of(wb, run_id)
    run = wb.load_run(run_id)
    check_models(wb.settings, [model] if model else [])
    stored = wb.relevance(run_id)
    if recompute or model or not stored:
        try:
            bundle = wb.user(run.spec.user_id)
            bundle.query(run.spec.query_id)
        except (LookupError, KeyError) as exc:
            fail(f"cannot rebuild the case of run {run.id}: {str(exc).strip(chr(39))}")
        ensure_writable(wb)  # the decisions are stored; an LLM decider is paid per target
        try:
            wb.decide_relevance(run, bundle, embeddings=not no_embedding, llm=model, attributes=attr_source)
        except UnknownExtraction as exc:
            fail(str(exc))
        stored = wb.relevance(run_id)
    if not stored:
        fail(
            f"nothing to decide for run {run_id}: no attributes (extract with `prefscope attributes`) "
            "and no retrieved turns (use a RAG method)"
        )
    decisions = [s.decision for s in stored]
    texts = {(s.decision.target_kind, s.decision.target_id): s.target_text for s in stored}
    table_rows = rel.side_by_side(decisions)
    deciders = [d for d in rel.DECIDERS if any(d in row for row in table_rows.values())]
    table = Table("target", "text", *deciders, title=f"relevance for run {run_id} (query {run.spec.query_id})")
    for (kind, tid), row in table_rows.items():
        cells = []
        for d in deciders:
            x = row.get(d)
            if x is None:
                cells.append("")
            elif x.relevant is None:
                cells.append("[red]?[/]")
            else:
                mark = "[green]yes[/]" if x.relevant else "no"
                cells.append(mark + (f" {x.score:.2f}" if x.score is not None and d in ("bm25", "embedding") else ""))
        table.add_row(safe_text(f"{kind} {tid}"), safe_text(short_cell(texts.get((kind, tid)), 60)), *cells)
    console.print(table)
    agree = Table("decider", f"vs {reference}", "n", "relevant %", "kappa", "P", "R", "F1", title="agreement")
    for a in rel.agreement(decisions, reference):
        rate = "—" if a.positive_rate is None else f"{a.positive_rate:.0%}"
        agree.add_row(
            a.decider, reference, str(a.n), rate, *(score_cell(v) for v in (a.kappa, a.precision, a.recall, a.f1))
        )
    console.print(agree)
