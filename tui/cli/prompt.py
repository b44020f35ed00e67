"""`prefscope prompt USER QUERY`: print the exact prompt plan a method would send.

Builds the context (configuration, expression type, seed), plans the method, and prints every
message (long ones cut in the middle unless ``--full``), token counts per step, where the gold
evidence sits and, for RAG, the retrieved turns with their scores. ``--json`` prints the same as
JSON (always with full messages). Nothing is sent to any model.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from tui.cli.common import settings_of

REPO_SAMPLE_FILLER = Path(__file__).resolve().parents[2] / "sample_data" / "filler"
HEAD = 220
TAIL = 160


def _settings(ctx: click.Context):
    return settings_of(ctx.obj)


def _open_db_if_present(path: Path):
    if not path.exists():
        return None
    try:
        from storage.db import open_db
    except ImportError:
        return None
    return open_db(path)


def _load_bundle(user_id: str, bundle_path: str | None, db):
    if bundle_path:
        from core.formats import FormatError, load_path

        try:
            result = load_path(bundle_path)
        except FormatError as exc:
            raise click.ClickException(str(exc)) from None
        for b in result.bundles:
            if b.user.id == user_id:
                return b
        ids = ", ".join(b.user.id for b in result.bundles) or "none"
        raise click.ClickException(f"{bundle_path} has no user {user_id!r} (users: {ids})")
    if db is None:
        raise click.ClickException("no database yet: import data first (`prefscope import`) or pass --bundle PATH")
    from storage.users import UnknownUser, load_user

    try:
        return load_user(db, user_id)
    except UnknownUser as exc:
        raise click.ClickException(str(exc)) from None


def _load_fillers(paths: tuple[str, ...], db) -> tuple[list, str]:
    from core.formats import FormatError, load_path

    pools = []
    if paths:
        for p in paths:
            try:
                pools += load_path(p).fillers
            except FormatError as exc:
                raise click.ClickException(str(exc)) from None
        return pools, "--filler " + ", ".join(paths)
    if db is not None:
        try:
            from storage.fillers import load_filler_pools

            pools = load_filler_pools(db)
        except ImportError:
            pools = []
        if pools:
            return pools, "database"
    if REPO_SAMPLE_FILLER.is_dir() and any(REPO_SAMPLE_FILLER.glob("*.json")):
        try:
            pools = load_path(REPO_SAMPLE_FILLER).fillers
        except FormatError as exc:
            raise click.ClickException(f"sample filler pool: {exc}") from None
        return pools, str(REPO_SAMPLE_FILLER)
    return [], "none"


def cut_middle(text: str, full: bool) -> str:
    if full or len(text) <= HEAD + TAIL + 80:
        return text
    omitted = len(text) - HEAD - TAIL
    return f"{text[:HEAD]}\n    … [{omitted:,} characters omitted; --full shows them] …\n{text[-TAIL:]}"


@click.command("prompt")
@click.argument("user_id", metavar="USER")
@click.argument("query_id", metavar="QUERY")
@click.option(
    "--bundle",
    "bundle_path",
    type=click.Path(exists=True),
    help="Read the user from a native bundle file instead of the database.",
)
@click.option(
    "--expression",
    "expression_type",
    type=click.IntRange(1, 4),
    default=None,
    help="Preference expression type 1-4 (RealPref).",
)
@click.option(
    "--context",
    "context_name",
    default="simple",
    show_default=True,
    help="simple, normal, long, very_long, extended, extreme, full, oracle, summaries, none, custom.",
)
@click.option("--method", default="zero-shot", show_default=True, help="Prompting method (see --list-methods).")
@click.option("--seed", default=0, show_default=True, help="Seed for filler choice and placement.")
@click.option("--k", default=5, show_default=True, help="RAG: number of retrieved turns.")
@click.option("--retriever", type=click.Choice(["embedding", "bm25"]), default="embedding", show_default=True)
@click.option("--sessions", "session_ids", default="", help="custom context: comma-separated session ids.")
@click.option(
    "--filler",
    "filler_paths",
    multiple=True,
    type=click.Path(exists=True),
    help="Filler pool file/folder (repeatable).",
)
@click.option("--window", type=int, default=None, help="Model context window: refuse larger prompts unless --force.")
@click.option("--force", is_flag=True, help="Print even if the prompt exceeds --window.")
@click.option("--full", is_flag=True, help="Do not cut long messages in the middle.")
@click.option("--json", "as_json", is_flag=True, help="Print the context and plan as JSON.")
@click.option(
    "--list-methods",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=lambda c, p, v: _list_methods(c, v),
    help="List the methods and exit.",
)
@click.pass_context
def prompt(
    ctx: click.Context,
    user_id,
    query_id,
    bundle_path,
    expression_type,
    context_name,
    method,
    seed,
    k,
    retriever,
    session_ids,
    filler_paths,
    window,
    force,
    full,
    as_json,
) -> None:
    """Print the exact prompt plan for a user, query and method (nothing is sent)."""
    from core.history.build import build_context
    from core.history.configs import ContextError, ContextWindowExceeded, check_window, config_named
    from core.methods import UnknownMethod, method_info, plan
    from core.methods.base import MethodOptions

    settings = _settings(ctx)
    db = None if bundle_path and not Path(settings.db).exists() else _open_db_if_present(Path(settings.db))
    bundle = _load_bundle(user_id, bundle_path, db)
    try:
        query = bundle.query(query_id)
    except KeyError as exc:
        ids = ", ".join(q.id for q in bundle.queries) or "none"
        raise click.ClickException(f"{exc.args[0]} (queries: {ids})") from None
    try:
        info = method_info(method)
        cfg = config_named(context_name)
    except (UnknownMethod, ContextError) as exc:
        raise click.ClickException(str(exc)) from None

    pools, pool_source = _load_fillers(filler_paths, db) if cfg.filler_target else ([], "not needed")
    try:
        built = build_context(
            bundle,
            query=query,
            expression_type=expression_type,
            config=cfg,
            seed=seed,
            filler_pools=pools,
            session_ids=[s for s in session_ids.split(",") if s.strip()] or None,
        )
    except ContextError as exc:
        raise click.ClickException(str(exc)) from None

    cache = None
    if db is not None and info.name == "rag" and retriever == "embedding":
        from storage.embeddings import SqliteEmbeddingCache

        cache = SqliteEmbeddingCache(db)
    opts = MethodOptions(k=k, retriever=retriever, embedding_model=settings.embedding_model, embedding_cache=cache)
    try:
        the_plan = plan(info.name, built, query, opts)
    except Exception as exc:
        from core.history.retrieval import RetrievalError

        if isinstance(exc, RetrievalError):
            raise click.ClickException(str(exc)) from None
        raise

    biggest = max(s.tokens for s in the_plan.steps)
    window_note = None
    if window is not None and settings.enforce_context_window:
        try:
            window_note = check_window(biggest, window, force)
        except ContextWindowExceeded as exc:
            raise click.ClickException(f"{exc} (add --force to print it anyway)") from None

    summary_plans = []
    if built.summary_requests:
        from core.methods.cupid import session_summary_plan

        summary_plans = [session_summary_plan(bundle.session(sid)) for sid in built.summary_requests]

    if as_json:
        out = {
            "user": bundle.user.id,
            "query": query.model_dump(mode="json"),
            "method": info.name,
            "filler_source": pool_source,
            "context": built.summary_row(),
            "plan": the_plan.model_dump(mode="json"),
            "pending_summary_calls": [p.model_dump(mode="json") for p in summary_plans],
            "window_note": window_note,
        }
        click.echo(json.dumps(out, ensure_ascii=False, indent=1))
        return
    _print_text(bundle, query, info, built, the_plan, pool_source, summary_plans, window_note, full)


def _list_methods(ctx: click.Context, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from core.methods import list_methods

    for m in list_methods():
        click.echo(
            f"{m.name:15} {m.family:13} {m.steps} step{'s' if m.steps > 1 else ' '}  {m.description}  [{m.citation}]"
        )
    ctx.exit()


def _print_text(bundle, query, info, built, the_plan, pool_source, summary_plans, window_note, full) -> None:
    echo = click.echo
    head = click.style
    echo(
        head(f"{info.name}", bold=True) + f" ({info.family}; {info.citation}) · user {bundle.user.id} · query "
        f"{query.id} ({query.kind}) · expression {built.expression_type or '–'} · context {built.config} · seed {built.seed}"
    )
    n_fill = sum(1 for s in built.sessions if s.is_filler)
    line = f"history: {built.history_tokens:,} tokens in {len(built.sessions)} sessions ({n_fill} filler; user {built.user_tokens:,}"
    if built.target_tokens:
        line += f", interval {built.interval_tokens:,}, tail {built.tail_tokens:,}; filler target {built.target_tokens:,} ±2%: "
        line += "ok" if built.within_target else "MISSED"
        line += f"; filler from {pool_source}"
    echo(line + ")")
    for e in built.evidence:
        echo(f"evidence: {e.session_id} at position {e.position}, {e.tokens_to_query:,} tokens before the query")
    for sid in built.missing_evidence:
        echo(f"evidence: {sid} is NOT in this context")
    for note in the_plan.notes + ([window_note] if window_note else []):
        echo(head("note: ", fg="yellow") + note)
    if the_plan.retrieved:
        echo(head(f"retrieved turns (top {len(the_plan.retrieved)}):", bold=True))
        for r in the_plan.retrieved:
            star = head(" ★ evidence", fg="green") if r.is_evidence else ""
            snippet = " ".join(r.text.split())[:90]
            echo(f"  #{r.rank} {r.similarity:8.4f}  {r.session_id}#{r.turn_index}{star}  {snippet}")
    from core.history.tokens import count_tokens

    for i, step in enumerate(the_plan.steps, 1):
        needs = f" · uses {', '.join(step.needs())}" if step.needs() else ""
        echo(
            head(
                f"\n── step {i}/{len(the_plan.steps)}: {step.name} · {step.tokens:,} tokens · {step.purpose}{needs}",
                bold=True,
            )
        )
        for j, m in enumerate(step.messages):
            echo(head(f"[{j}] {m.role} ({count_tokens(m.content):,} t)", fg="cyan"))
            echo(cut_middle(m.content, full))
    echo(
        head(
            f"\ntotal: {the_plan.total_tokens:,} tokens over {len(the_plan.steps)} step(s); answer format: {the_plan.answer_format}",
            bold=True,
        )
    )
    if summary_plans:
        per = summary_plans[0].total_tokens
        echo(
            f"pending: {len(summary_plans)} session summaries (CUPID Fig. 23), one call each (~{per:,} tokens for the first);"
            " they are written when a run uses a model and cached per (model, session sha256)"
        )
