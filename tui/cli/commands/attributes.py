"""`prefscope attributes USER`: extract a user's attributes from their history (Re-Centering
stage 1) with a model, or list the stored ones.

A thin view: ``core.analysis.attributes`` extracts, the workbench (:mod:`app`) stores and reads.
"""

from __future__ import annotations

import asyncio

import click
from rich.table import Table

from tui.cli.cells import short_cell
from tui.cli.command_info import CommandInfo
from tui.cli.common import console, ensure_writable, exit_for_failures, fail, open_workbench, user_of
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="attributes",
    help="Extract or list a user's attributes.",
    examples=("prefscope attributes maya", "prefscope attributes maya --model openai:gpt-4o-mini --no-dedup"),
    writes=True,
    order=140,
)


@click.command()
@click.argument("user")
@click.option("--model", help="Extract now with this model (provider:model); without it, show what is stored.")
@click.option("--verify-with", help="Also run the verifier (accept/uncertain/reject) with this model.")
@click.option("--chunk-chars", type=click.IntRange(min=500), default=50_000, show_default=True)
@click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.4, show_default=True)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.7,
    show_default=True,
    help="Cosine similarity for merging near-duplicates.",
)
@click.option("--no-dedup", is_flag=True, help="Skip embedding-based merging (exact duplicates only; no torch).")
@click.option("--extraction", "extraction_id", help="Show this stored extraction.")
@click.pass_obj
def attributes(obj, user, model, verify_with, chunk_chars, min_confidence, threshold, no_dedup, extraction_id):
    """Extract USER's attributes from their history (Re-Centering stage 1), or list stored ones."""
    from app.errors import UnknownExtraction
    from tui.cli.common import check_models

    wb = open_workbench(obj, sample_data=False)
    settings = wb.settings
    bundle = user_of(wb, user)
    user = bundle.user.id
    check_models(settings, [m for m in (model, verify_with) if m])
    if model:
        from core.analysis.attributes import extract

        ensure_writable(wb)

        embedder = None if no_dedup else _embedder(wb)
        embed = embedder.embed if embedder is not None else None
        ex = asyncio.run(
            extract(
                bundle,
                model,
                wb.complete(),
                embed=embed,
                chunk_chars=chunk_chars,
                min_confidence=min_confidence,
                threshold=threshold,
                verifier=verify_with,
            )
        )
        extraction_id = wb.save_extraction(ex, embedder.id if embedder is not None else None)
    try:
        stored = wb.load_extraction(extraction_id, user)
    except UnknownExtraction as exc:
        fail(str(exc))
    if bundle.attributes:
        gold = Table("id", "gold attribute", "conf", "evidence", title=f"{user}: imported (gold) attributes")
        for a in bundle.attributes:
            gold.add_row(
                safe_text(a.id),
                safe_text(short_cell(a.text)),
                f"{a.confidence:.2f}",
                safe_text(", ".join(a.evidence_turns)),
            )
        console.print(gold)
    if stored is None:
        if not bundle.attributes:
            console.print(
                f"no attributes stored for {user}; extract some: prefscope attributes {user} --model PROVIDER:MODEL"
            )
        return
    ex = stored.extraction
    table = Table(
        "id",
        "attribute",
        "conf",
        "evidence",
        "merged",
        "verifier",
        "operator",
        title=f"{user}: extraction {stored.id} by {ex.model} ({ex.prompt_version}, {stored.created_at})",
    )
    for x in ex.attributes:
        op = stored.operator.get(x.attribute.id, (None, ""))[0]
        if x.verifier_verdict:
            verdict = safe_text(x.verifier_verdict)
        else:
            verdict = safe_text(short_cell(x.verifier_error, 30), style="red") if x.verifier_error else safe_text("")
        table.add_row(
            safe_text(x.attribute.id),
            safe_text(short_cell(x.attribute.text)),
            f"{x.attribute.confidence:.2f}",
            safe_text(", ".join(x.attribute.evidence_turns)),
            str(len(x.merged_from)),
            verdict,
            safe_text(op or ""),
        )
    console.print(table)
    merged = "no merging" if ex.threshold is None else f"merged at cosine ≥ {ex.threshold:g}"
    console.print(
        f"{len(ex.attributes)} attributes ({merged}); {len(ex.dropped)} dropped under confidence "
        f"{ex.min_confidence:g}; {len(ex.chunks)} chunks of ≤ {ex.chunk_chars} characters"
    )
    for err in ex.errors:
        console.print(safe_text(err, style="red") + " (raw output stored)")
    if model:  # an extraction made now: exit 1 when every chunk's call failed, 3 when some did
        causes = [safe_text(c.error).plain for c in ex.chunks if c.error]
        exit_for_failures("chunk extraction", causes, len(ex.chunks))


def _embedder(wb):
    from core.history.retrieval import Embedder

    return Embedder.configured(wb.settings, wb.embedding_cache())
