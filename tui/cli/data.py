"""Data commands: import, users, show, schema, paths.

Thin views over ``core.formats`` and the workbench (``app``): they parse options, call one function, print.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from core.formats import FORMAT_ORDER, FormatError
from core.text.terminal_safe import terminal_safe
from tui.cli.common import fail, open_workbench, settings_of
from tui.safe_text import safe_text

STAR = "★"
#: Where a question is asked inside the history (PersonaMem cuts the context there).
ASKED = "▶"


# -- helpers -------------------------------------------------------------------------------
def _obj(ctx: click.Context) -> dict:
    return ctx.find_root().obj or {}


def _settings(ctx: click.Context):
    return settings_of(_obj(ctx))


def _db_path(ctx: click.Context) -> Path:
    return Path(_settings(ctx).db).expanduser()


def _open(ctx: click.Context, *, must_exist: bool = False):
    """The workbench without sample data (these commands manage the data themselves); reading
    commands do not create a database just to say it is empty."""
    return open_workbench(_obj(ctx), sample_data=False, must_exist=must_exist)


# -- import --------------------------------------------------------------------------------
@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "format_", type=click.Choice(FORMAT_ORDER), help="Skip auto-detection.")
@click.option(
    "--max-mb", type=click.IntRange(min=1), help="Refuse files larger than this (default from settings: 200)."
)
@click.option(
    "--max-field-mb",
    type=click.FloatRange(min=0, min_open=True),
    help="Refuse any single text (a turn, a persona) longer than this many MB (default from settings: 4).",
)
@click.option("--user-speaker", type=click.Choice(["a", "b"]), help="LoCoMo only: whose history it is (default a).")
@click.option("--embed", "embed_now", is_flag=True, help="Embed the imported users' histories now (RAG starts warm).")
@click.option(
    "--contexts",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="PersonaMem only: the shared_contexts_<size>.jsonl of the questions CSV (default: the one beside it).",
)
@click.pass_context
def import_cmd(
    ctx: click.Context,
    path: Path,
    format_: str | None,
    max_mb: int | None,
    max_field_mb: float | None,
    user_speaker: str | None,
    contexts: Path | None,
    embed_now: bool,
) -> None:
    """Import a dataset file or folder into the database, all or nothing.

    Re-importing a user or filler pool id replaces the stored one.
    """
    from core.formats import load_path

    settings = _settings(ctx)
    max_bytes = (max_mb or settings.max_import_mb) * 1024 * 1024
    max_field_chars = int((max_field_mb or settings.max_field_mb) * 1024 * 1024)
    try:
        options: dict[str, object] = {"user_speaker": user_speaker} if user_speaker is not None else {}
        if contexts is not None:
            options["contexts"] = contexts
        result = load_path(path, format=format_, max_bytes=max_bytes, max_field_chars=max_field_chars, **options)
    except FormatError as exc:
        fail(str(exc))
        return

    from app.errors import DuplicateInImport, MergeConflict

    wb = _open(ctx)
    db_path = wb.db_path
    try:
        summary = wb.save_import(result)
    except (DuplicateInImport, MergeConflict, sqlite3.DatabaseError) as exc:
        fail(f"{path.name}: {exc} (the database is unchanged)")
        return
    finally:
        wb.close()

    out = Console(highlight=False, soft_wrap=True)
    parts = []
    if summary.users_added:
        parts.append(f"{len(summary.users_added)} user{'s' * (len(summary.users_added) != 1)} added")
    if summary.users_replaced:
        parts.append(f"{len(summary.users_replaced)} replaced ({_ids(summary.users_replaced)})")
    if summary.pools_added:
        parts.append(f"{len(summary.pools_added)} filler pool{'s' * (len(summary.pools_added) != 1)} added")
    if summary.pools_replaced:
        parts.append(f"{len(summary.pools_replaced)} filler pool(s) replaced ({_ids(summary.pools_replaced)})")
    out.print(
        safe_text(
            f"Imported {path.name} ({summary.format}): " + (", ".join(parts) or "nothing to store"), style="green"
        )
    )
    out.print(
        Text(
            f"{summary.sessions:,} sessions · {summary.turns:,} turns · {summary.preferences:,} preferences · "
            f"{summary.queries:,} queries · {summary.attributes:,} attributes → {db_path}"
        )
    )
    for note in summary.notes:
        out.print(safe_text(f"note: {note}", style="yellow"))
    if embed_now:
        import sys

        from tui.cli.embed import embed_users

        users = [*summary.users_added, *summary.users_replaced]
        wb = _open(ctx)
        try:
            code = embed_users(wb, users, out)
        finally:
            wb.close()
        if code:
            sys.exit(code)


def _ids(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … {len(ids) - limit} more" if len(ids) > limit else "")


# -- users ---------------------------------------------------------------------------------
@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON (full ids, exact counts) instead of tables.")
@click.pass_context
def users(ctx: click.Context, as_json: bool) -> None:
    """List imported users (and filler pools). Commands take a user id in full or any unique prefix."""
    from dataclasses import asdict

    wb = _open(ctx, must_exist=True)
    try:
        rows = wb.users()
        pools = wb.filler_pool_rows()
    finally:
        wb.close()
    if as_json:
        doc = {"users": [asdict(u) for u in rows], "filler_pools": [asdict(p) for p in pools]}
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    out = Console(highlight=False)
    if not rows and not pools:
        out.print("No users yet. Import some: prefscope import PATH")
        return
    if rows:
        out.print(
            _listing(
                f"{len(rows)} user{'s' * (len(rows) != 1)}",
                out.width,
                [
                    (u.id, u.source, u.name, [u.sessions, u.preferences, u.queries, u.attributes, u.chars // 4])
                    for u in rows
                ],
                ["sess", "prefs", "qs", "attrs", "~t"],
            )
        )
    if pools:
        out.print(
            _listing(
                f"{len(pools)} filler pool{'s' * (len(pools) != 1)}",
                out.width,
                [(p.id, p.source, p.name, [p.sessions, p.chars // 4]) for p in pools],
                ["sess", "~t"],
            )
        )
    out.print(Text("~t = characters / 4; `prefscope show USER` counts real tokens.", style="dim"))


def _listing(title: str, width: int, items: list[tuple[str, str, str, list[int]]], numbers: list[str]) -> Table:
    """id | numbers… | source | name, the name cut to whatever width is left."""
    table = Table(title=title, title_justify="left", box=None, pad_edge=False, header_style="bold")
    id_w = max(len(safe_text(i[0])) for i in items)
    table.add_column("id", no_wrap=True, min_width=id_w)
    used = id_w + 2
    for n, name in enumerate(numbers):
        w = max(len(name), *(len(f"{i[3][n]:,}") for i in items))
        table.add_column(name, justify="right", no_wrap=True, min_width=w)
        used += w + 2
    source_w = min(12, max(len("source"), *(len(safe_text(i[1])) for i in items)))
    table.add_column("source", no_wrap=True, overflow="ellipsis", max_width=source_w)
    used += source_w + 2
    table.add_column("name", no_wrap=True, overflow="ellipsis", max_width=max(8, width - used - 1))
    for id_, source, name, values in items:
        table.add_row(safe_text(id_), *(f"{v:,}" for v in values), safe_text(source), safe_text(name))
    return table


# -- show ----------------------------------------------------------------------------------
@click.command()
@click.argument("user_id", metavar="USER")
@click.option("--session", "session_id", help="Print this session's turns instead of the timeline.")
@click.option("--query", "query_id", help="Star the gold evidence of this query (default: the first).")
@click.option(
    "--expression",
    type=click.IntRange(0, 4),
    help="Expression type 1-4 (0: none) whose evidence to star (default: the lowest present).",
)
@click.option("--full", is_flag=True, help="With --session: print very long turns whole instead of their start.")
@click.pass_context
def show(
    ctx: click.Context,
    user_id: str,
    session_id: str | None,
    query_id: str | None,
    expression: int | None,
    full: bool,
) -> None:
    """Print a user's session timeline with the chosen query's gold evidence starred (★)."""
    wb = _open(ctx, must_exist=True)
    try:
        bundle = wb.user(wb.resolve_user_id(user_id))  # a full id or a unique prefix
    except LookupError as exc:  # unknown or ambiguous
        fail(terminal_safe(str(exc)))
        return
    finally:
        wb.close()
    if session_id is not None:
        _print_session(bundle, session_id, full)
    else:
        _print_timeline(bundle, query_id, expression)


def _print_session(bundle, session_id: str, full: bool = False) -> None:
    from core.history.timeline import tokens_by_session
    from core.text.clip import clip, clip_note

    try:
        session = bundle.session(session_id)
    except KeyError:
        fail(f"user {bundle.user.id!r} has no session {session_id!r}")
        return
    tokens, estimated = tokens_by_session([session])
    unit = "~t" if estimated else "t"
    out = Console(highlight=False)
    head = safe_text(session.id, style="bold")
    head.append(safe_text(f"  {session.kind}"))
    if session.date:
        head.append(f"  {session.date.isoformat()}")
    if session.expression_type:
        head.append(f"  E{session.expression_type}")
    if session.preference_ids:
        head.append(safe_text(f"  prefs {', '.join(session.preference_ids)}"))
    head.append(f"  {tokens[session.id]:,}{unit}  {len(session.turns)} turns")
    out.print(head)
    if session.title:
        out.print(safe_text(session.title, style="italic"))
    for i, turn in enumerate(session.turns):
        label = safe_text(f"\n#{i} {turn.role}", style="bold cyan" if turn.role == "user" else "bold magenta")
        if turn.source_id:
            label.append(safe_text(f"  ({turn.source_id})", style="dim"))
        out.print(label)
        shown, hidden = (turn.content, 0) if full else clip(turn.content)
        out.print(safe_text(shown))
        if hidden:
            out.print(safe_text(clip_note(hidden, "--full prints it all"), style="dim"))


def _print_timeline(bundle, query_id: str | None, expression: int | None) -> None:
    from core.history.evidence_depth import evidence_depth_line
    from core.history.timeline import timeline_rows, tokens_by_session
    from core.model import EXPRESSION_TYPES, HISTORY_END

    query = None
    if query_id is not None:
        try:
            query = bundle.query(query_id)
        except KeyError:
            known = ", ".join(q.id for q in bundle.queries[:10]) or "none"
            fail(f"user {bundle.user.id!r} has no query {query_id!r} (queries: {terminal_safe(known)})")
            return
    elif bundle.queries:
        query = bundle.queries[0]
    if expression is None:
        present = [t for t in bundle.expression_types() if t]
        expression = present[0] if present else None
    evidence = set(bundle.gold_evidence(query, expression)) if query is not None else set()
    tokens, estimated = tokens_by_session(bundle.sessions)
    unit = "~t" if estimated else "t"
    rows = timeline_rows(bundle, expression_type=expression, evidence=evidence, tokens=tokens, estimated=estimated)

    out = Console(highlight=False)
    u = bundle.user
    title = safe_text(u.name or u.id, style="bold")
    if u.name:
        title.append(safe_text(f" ({u.id})"))
    title.append(safe_text(f" · {u.source}"))
    title.append(f" · {len(bundle.sessions)} sessions · {sum(tokens.values()):,}{unit}")
    out.print(title)
    if query is not None:
        line = safe_text(f"query {query.id} [{query.kind}]: ", style="bold")
        line.append(safe_text(query.text))
        out.print(line)
        detail = []
        if query.preference_id:
            detail.append(f"preference {query.preference_id}: {bundle.preference(query.preference_id).text}")
        if u.source == "locomo" and "category" in query.meta:
            from core.formats.locomo import category_label

            detail.append(f"LoCoMo category {category_label(query.meta['category'])}")
        if query.evidence_sessions or query.evidence_turns:
            detail.append("evidence given by the query itself")
        elif expression:
            detail.append(f"expression {expression} ({EXPRESSION_TYPES[expression]})")
        depth = evidence_depth_line(query)
        if depth and not evidence:
            detail.append(f"{ASKED} {depth}")
        else:
            detail.append(f"{STAR} gold evidence: {len(evidence)} session{'s' * (len(evidence) != 1)}")
        out.print(safe_text(" · ".join(detail), style="dim"))
    else:
        out.print(Text("no queries: nothing to star", style="dim"))

    # Ids often repeat the user id (PrefEval: "<user>-explicit"); show them without it.
    prefix = _common_prefix(u.id, [s.id for s in bundle.sessions] + [p.id for p in bundle.preferences])
    short = (lambda i: "…" + i[len(prefix) :]) if prefix else (lambda i: i)
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name, justify in (
        ("", "left"),
        ("#", "right"),
        ("date", "left"),
        ("kind", "left"),
        ("expr", "left"),
        (unit, "right"),
        ("session", "left"),
        ("prefs", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis")
    other_types = False
    # A question asked part-way through the history (PersonaMem): mark the place, dim what follows.
    asked_after = query.meta.get(HISTORY_END) if query is not None else None
    after_question = asked_after == ""
    if after_question:
        table.add_row(ASKED, "", "", "", "", "", Text("question asked here", style="bold yellow"), "")
    for row in rows:
        dim = row.dim or after_question
        other_types = other_types or bool(row.dim)
        style = "dim" if dim else ("bold yellow" if row.evidence else "")
        if row.count > 1:
            kind, ident = f"{row.kind} ×{row.count}", f"{short(row.session_ids[0])} … {short(row.session_ids[-1])}"
        else:
            kind, ident = row.kind, short(row.session_ids[0])
        table.add_row(
            STAR if row.evidence else "",
            str(row.position),
            _dates(row),
            safe_text(kind),
            f"E{row.expression_type}" if row.expression_type else "",
            f"{row.tokens:,}",
            safe_text(ident),
            safe_text(",".join(short(p) for p in row.preference_ids)),
            style=style,
        )
        if asked_after and asked_after in row.session_ids:
            after_question = True
            label = Text("question asked here", style="bold yellow")
            table.add_row(ASKED, "", "", "", "", "", label, "")
    out.print(table)
    if prefix:
        out.print(safe_text(f"… = {prefix} (ids shown without the user id; --session takes the full id)", style="dim"))
    if asked_after is not None:
        out.print(
            Text(
                f"{ASKED} the question is asked there: dim sessions come later and never reach its prompt", style="dim"
            )
        )
    if other_types:
        out.print(
            Text(f"dim: preference sessions of other expression types (not in an E{expression} history)", style="dim")
        )
    if unit == "~t":
        out.print(Text("~t = characters / 4 (tokenizer unavailable)", style="dim"))


def _common_prefix(user_id: str, ids: list[str]) -> str:
    """The user id, if every id starts with it plus something more; else ""."""
    if ids and all(i.startswith(user_id) and len(i) > len(user_id) for i in ids):
        return user_id
    return ""


def _dates(row) -> str:
    if row.date is None:
        return ""
    if row.count > 1 and row.date_end and row.date_end != row.date:
        return f"{row.date.isoformat()}…{row.date_end.isoformat()}"
    return row.date.isoformat()


# -- schema --------------------------------------------------------------------------------
@click.command()
@click.option("--filler", is_flag=True, help="The filler-pool file format instead of the user bundle.")
def schema(filler: bool) -> None:
    """Print the JSON Schema of the native bundle format (prefscope.user, version 1)."""
    from core.formats import native
    from core.model import FillerPool, UserBundle

    model, tag = (FillerPool, native.FILLER_TAG) if filler else (UserBundle, native.USER_TAG)
    body = model.model_json_schema()
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{tag} v{native.VERSION}",
        "description": body.get("description", ""),
        "type": "object",
        "properties": {
            "format": {"const": tag, "type": "string"},
            "version": {"const": native.VERSION, "type": "integer"},
            **body.get("properties", {}),
        },
        "required": ["format", "version", *body.get("required", [])],
        "additionalProperties": False,
    }
    if "$defs" in body:
        doc["$defs"] = body["$defs"]
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))


# -- paths ---------------------------------------------------------------------------------
@click.command()
@click.pass_context
def paths(ctx: click.Context) -> None:
    """Print where the database, config file and data directory are (also when the config file is
    missing or invalid: that is when you need this)."""
    from core.history.onnx_export import cache_root
    from core.settings import Settings, SettingsError, config_path, data_dir, load_settings

    obj = _obj(ctx)
    config = Path(obj.get("config") or config_path()).expanduser()
    try:
        db, problem = Path(load_settings(obj.get("config"), db=obj.get("db")).db).expanduser(), None
    except SettingsError as exc:
        db, problem = Path(obj.get("db") or Settings().db).expanduser(), str(exc)
    if not config.exists():
        named = obj.get("config") is not None  # by --config or PREFSCOPE_CONFIG
        state = "absent: no such file; other commands refuse to start until it exists" if named else "absent (defaults)"
    else:
        state = f"invalid: {problem}" if problem else "exists"
    rows = [
        ("database", db, f"{db.stat().st_size / 1e6:.1f} MB" if db.exists() else "not created yet"),
        ("config", config, state),
        ("data dir", data_dir(), "exists" if data_dir().exists() else "not created yet"),
        ("embedders", cache_root(), "exists" if cache_root().exists() else "not created yet (make install fills it)"),
    ]
    for label, path, state in rows:  # plain lines: paths must stay whole for copy and paste
        click.echo(f"{label:<9} {path}  ({state})")
