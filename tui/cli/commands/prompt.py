"""`prefscope prompt USER QUERY`: print the exact prompt plan `prefscope run` would send.

Same options, same RunSpec, same prepare (the workbench's) as `run`; nothing is sent to a model,
so the sessions of a summaries context without a cached summary show a placeholder and are
listed as pending. Prints every message (long ones cut in the middle unless ``--full``), token
counts per step, where the gold evidence sits and, for RAG, the retrieved turns with their
scores. ``--json`` prints the same as JSON (always with full messages) with the sha256 of the
messages of all steps.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import click

from core.text.terminal_safe import terminal_safe as safe
from tui.cli.command_info import CommandInfo
from tui.cli.common import fail, open_workbench
from tui.cli.spec_options import PROFILE_HINT, SpecOptions, spec_options, with_profile_hint

COMMAND = CommandInfo(
    name="prompt",
    help="Print the exact prompt plan for a user, query and method.",
    examples=(
        "prefscope prompt maya p1-open --context long --method rag",
        "prefscope prompt maya p1-open --json",
    ),
    writes=True,
    order=100,
    details="Nothing is sent.",
)

HEAD = 220
TAIL = 160


def cut_middle(text: str, full: bool) -> str:
    if full or len(text) <= HEAD + TAIL + 80:
        return text
    omitted = len(text) - HEAD - TAIL
    return f"{text[:HEAD]}\n    … [{omitted:,} characters omitted; --full shows them] …\n{text[-TAIL:]}"


def _list_methods(ctx: click.Context, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from core.methods import list_methods

    for m in list_methods():
        click.echo(
            f"{m.name:15} {m.family:13} {m.steps} step{'s' if m.steps > 1 else ' '}  {m.description}  [{m.citation}]"
        )
    ctx.exit()


@click.command("prompt")
@click.argument("user_id", metavar="USER")
@click.argument("query_id", metavar="QUERY")
@spec_options
@click.option(
    "--bundle",
    "bundle_path",
    type=click.Path(exists=True),
    help="Read the user from a native bundle file instead of the database.",
)
@click.option(
    "--filler",
    "filler_paths",
    multiple=True,
    type=click.Path(exists=True),
    help="Filler pool file/folder instead of the stored pools (repeatable).",
)
@click.option("--window", type=int, default=None, help="Check against this context window for every model.")
@click.option("--full", is_flag=True, help="Do not cut long messages in the middle.")
@click.option("--json", "as_json", is_flag=True, help="Print the spec, context and plan as JSON.")
@click.option(
    "--list-methods",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=lambda c, p, v: _list_methods(c, v),
    help="List the methods and exit.",
)
@click.pass_obj
def prompt(
    obj,
    user_id: str,
    query_id: str,
    spec_options: SpecOptions,
    bundle_path: str | None,
    filler_paths: tuple[str, ...],
    window: int | None,
    full: bool,
    as_json: bool,
) -> None:
    """Print the exact prompt plan `run` would send for a user, query and method (nothing is sent)."""
    from core.history.configs import ContextError, ContextWindowExceeded
    from core.history.embedding_model import RetrievalError
    from core.methods import UnknownMethod, method_info
    from core.run.prepare import messages_sha256
    from core.run.profile import noted
    from tui.cli.common import settings_of, user_bundle

    if bundle_path:
        # A bundle file is read as is; a throwaway database holds the caches unless one exists.
        db = None if Path(settings_of(obj).db).expanduser().exists() else ":memory:"
        wb = open_workbench(obj, db_path=db)
        bundle = _bundle_from_file(bundle_path, user_id)
    else:
        wb = open_workbench(obj)
        bundle = user_bundle(wb, user_id, query_id)
    try:
        query = bundle.query(query_id)
    except KeyError as exc:
        ids = ", ".join(q.id for q in bundle.queries) or "none"
        fail(safe(f"{exc.args[0]} (queries: {ids})"))
    pools, pool_source = (_pools_from_files(filler_paths), "--filler " + ", ".join(filler_paths))
    if not filler_paths:
        pools, pool_source = wb.filler_pools(), "database"
    resolved = spec_options.resolve(wb.settings, bundle)
    spec = spec_options.spec(wb.settings, bundle, query_id, resolved)
    if filler_paths and spec.filler_pools is None:  # the files given are the pools to draw from
        spec = spec.model_copy(update={"filler_pools": sorted({p.id for p in pools})})
    windows = {m.id: window for m in spec.models} if window is not None else None
    try:
        info = method_info(spec.method)
        prepared = asyncio.run(wb.prepare_async(spec, bundle, pools, windows=windows, write_summaries=False))
    except ContextWindowExceeded as exc:
        fail(f"{exc} (add --force to print it anyway)")
    except (ContextError, UnknownMethod, RetrievalError) as exc:
        fail(with_profile_hint(str(exc), resolved))
    finally:
        wb.close()
    built, plan = prepared.context, noted(prepared.plan, resolved, PROFILE_HINT)
    from core.methods.session_summary import session_summary_plan

    summary_plans = [session_summary_plan(bundle.session(sid)) for sid in built.summary_requests]
    if as_json:
        out = {
            "user": bundle.user.id,
            "query": query.model_dump(mode="json"),
            "method": info.name,
            "spec": spec.model_dump(mode="json"),
            # Only when a profile gave a default: other users' JSON stays as it was.
            **({"profile": resolved.as_json()} if resolved.applied else {}),
            "filler_source": pool_source,
            "filler_pools": plan.filler_pools,
            "context": built.summary_row(),
            "plan": plan.model_dump(mode="json"),
            "messages_sha256": messages_sha256(plan),
            "pending_summary_calls": [p.model_dump(mode="json") for p in summary_plans],
        }
        # json escapes C0 itself; C1 and DEL too, as \u escapes: the same JSON, inert on a terminal.
        text = json.dumps(out, ensure_ascii=False, indent=1)
        click.echo(re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text))
        return
    _print_text(bundle, query, info, built, plan, pool_source, summary_plans, full)


def _bundle_from_file(path: str, user_id: str):
    from core.formats import FormatError, load_path

    try:
        result = load_path(path)
    except FormatError as exc:
        fail(str(exc))
    for b in result.bundles:
        if b.user.id == user_id:
            return b
    ids = ", ".join(b.user.id for b in result.bundles) or "none"
    fail(safe(f"{path} has no user {user_id!r} (users: {ids})"))


def _pools_from_files(paths: tuple[str, ...]) -> list:
    from core.formats import FormatError, load_path

    pools = []
    for p in paths:
        try:
            pools += load_path(p).fillers
        except FormatError as exc:
            fail(str(exc))
    return pools


def _pools_line(ids: list[str], source: str) -> str:
    """``pool sample-everyday`` (and where it was read from when not the database)."""
    named = f"pool{'s' * (len(ids) != 1)} {', '.join(map(safe, ids))}" if ids else "no pool"
    return named if source == "database" else f"{named} ({safe(source)})"


def _print_text(bundle, query, info, built, plan, pool_source, summary_plans, full) -> None:
    echo = click.echo
    head = click.style
    echo(
        head(f"{info.name}", bold=True) + f" ({info.family}; {info.citation}) · user {safe(bundle.user.id)} · query "
        f"{safe(query.id)} ({safe(query.kind)}) · expression {built.expression_type or '–'} · context {built.config} · seed {built.seed}"
    )
    n_fill = sum(1 for s in built.sessions if s.is_filler)
    line = f"history: {built.history_tokens:,} tokens in {len(built.sessions)} sessions ({n_fill} filler; user {built.user_tokens:,}"
    if built.target_tokens:
        line += f", interval {built.interval_tokens:,}, tail {built.tail_tokens:,}; filler target {built.target_tokens:,} ±2%: "
        line += "ok" if built.within_target else "MISSED"
    if plan.filler_pools or built.target_tokens:
        line += f"; filler from {_pools_line(plan.filler_pools, pool_source)}"
    echo(line + ")")
    for e in built.evidence:
        echo(f"evidence: {safe(e.session_id)} at position {e.position}, {e.tokens_to_query:,} tokens before the query")
    for sid in built.missing_evidence:
        echo(f"evidence: {safe(sid)} is NOT in this context")
    for note in plan.notes:
        echo(head("note: ", fg="yellow") + safe(note))
    if plan.retrieved:
        echo(head(f"retrieved turns (top {len(plan.retrieved)}):", bold=True))
        for r in plan.retrieved:
            star = head(" ★ evidence", fg="green") if r.is_evidence else ""
            snippet = safe(" ".join(r.text.split())[:90])
            echo(f"  #{r.rank} {r.similarity:8.4f}  {safe(r.session_id)}#{r.turn_index}{star}  {snippet}")
    from core.history.tokens import count_tokens

    for i, step in enumerate(plan.steps, 1):
        needs = f" · uses {', '.join(step.needs())}" if step.needs() else ""
        echo(
            head(
                f"\n── step {i}/{len(plan.steps)}: {step.name} · {step.tokens:,} tokens · {step.purpose}{needs}",
                bold=True,
            )
        )
        for j, m in enumerate(step.messages):
            echo(head(f"[{j}] {m.role} ({count_tokens(m.content):,} t)", fg="cyan"))
            echo(safe(cut_middle(m.content, full)))
    echo(
        head(
            f"\ntotal: {plan.total_tokens:,} tokens over {len(plan.steps)} step(s); answer format: {plan.answer_format}",
            bold=True,
        )
    )
    if summary_plans:
        per = summary_plans[0].total_tokens
        echo(
            f"pending: {len(summary_plans)} session summaries (CUPID Fig. 23), one call each (~{per:,} tokens for the first);"
            " they are written when a run uses a model and cached per (model, session sha256)"
        )
