"""`prefscope judge`, `prefscope attributes`, `prefscope relevance`: analyses over stored data.

Thin views: they load what is stored, call ``core.judges`` through the provider layer, store the
result through ``storage.analyses`` and print rich tables.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import click
from rich.table import Table

from tui.cli.common import console, exit_for_failures, fail, open_workbench, run_id_of, user_of
from tui.safe_text import safe_text


def _short(text: str | None, n: int = 90) -> str:
    s = " ".join((text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _score(value: float | None) -> str:
    return "—" if value is None else (f"{value:g}" if float(value).is_integer() else f"{value:.3f}")


# -- judge ----------------------------------------------------------------------------------------


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
    from storage.runs import run_ids_labelled
    from tui.cli.run import check_models

    wb = open_workbench(obj, sample_data=False)
    settings = wb.settings
    ids = [run_id_of(wb, r) for r in run_ids]
    labelled = run_ids_labelled(wb.db, list(labels))
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
    from storage.export import RunFilter
    from storage.report import retest_table
    from tui.cli.report_view import rich_table

    f = RunFilter(run_ids=list(run_ids))
    for kind in kinds:
        table = retest_table(wb.db, kind, f)
        if table.rows:
            console.print(rich_table(table, fit=console.width))


def _judge_run(wb, run_id: str, chosen, dry_run: bool, *, verbose: bool, repeats: int = 1) -> list:
    """Judge one stored run's finished answers; the table (one run) or a line (several)."""
    from core.judges.aggregate import source_of
    from storage.analyses import save_judgments

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
        save_judgments(wb.db, run_id, results)
    failed = sum(1 for _, j in results if not j.parse_ok)
    if not verbose:
        scores = ", ".join(f"{j.dimension} {_score(j.score)}" for _, j in results if j.parse_ok)
        console.print(safe_text(f"{run_id}: {_short(scores, 70) or '—'}" + (f" ({failed} failed)" if failed else "")))
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
            _score(j.score),
            "yes" if j.parse_ok else "[red]no[/]",
            safe_text(_short(j.rationale if j.parse_ok else j.error)),
        )
    console.print(table)
    stored = "not stored (--dry-run)" if dry_run else "stored"
    console.print(f"{len(results)} judgments {stored}; {failed} parse/call failures (kept with their raw output)")
    return results


# -- attributes -----------------------------------------------------------------------------------


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
    from storage.analyses import UnknownExtraction, latest_extraction, load_extraction, save_extraction
    from tui.cli.run import check_models

    wb = open_workbench(obj, sample_data=False)
    settings = wb.settings
    bundle = user_of(wb, user)
    user = bundle.user.id
    check_models(settings, [m for m in (model, verify_with) if m])
    if model:
        from core.analysis.attributes import extract

        embedder = None if no_dedup else _embedder(settings, wb.db)
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
        extraction_id = save_extraction(wb.db, ex, embedding_model=embedder.id if embedder is not None else None)
    try:
        stored = load_extraction(wb.db, extraction_id) if extraction_id else latest_extraction(wb.db, user)
    except UnknownExtraction as exc:
        fail(str(exc))
    if bundle.attributes:
        gold = Table("id", "gold attribute", "conf", "evidence", title=f"{user}: imported (gold) attributes")
        for a in bundle.attributes:
            gold.add_row(
                safe_text(a.id),
                safe_text(_short(a.text)),
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
            verdict = safe_text(_short(x.verifier_error, 30), style="red") if x.verifier_error else safe_text("")
        table.add_row(
            safe_text(x.attribute.id),
            safe_text(_short(x.attribute.text)),
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


def _embedder(settings, db):
    from core.history.retrieval import Embedder
    from storage.embeddings import SqliteEmbeddingCache

    return Embedder.configured(settings, SqliteEmbeddingCache(db))


# -- relevance ------------------------------------------------------------------------------------


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
    from core.analysis import relevance as rel
    from storage.analyses import UnknownExtraction
    from tui.cli.run import check_models

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
        table.add_row(safe_text(f"{kind} {tid}"), safe_text(_short(texts.get((kind, tid)), 60)), *cells)
    console.print(table)
    agree = Table("decider", f"vs {reference}", "n", "relevant %", "kappa", "P", "R", "F1", title="agreement")
    for a in rel.agreement(decisions, reference):
        rate = "—" if a.positive_rate is None else f"{a.positive_rate:.0%}"
        agree.add_row(
            a.decider, reference, str(a.n), rate, _score(a.kappa), _score(a.precision), _score(a.recall), _score(a.f1)
        )
    console.print(agree)
