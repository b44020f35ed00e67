"""`prefscope show USER`: a user's session timeline with a query's gold evidence starred, or one
session's turns.

A thin view over the workbench (``app``) and ``core.history``: it parses options, reads, prints.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from core.benchmark import Benchmark, for_source
from core.text.terminal_safe import terminal_safe
from tui.cli.command_info import CommandInfo
from tui.cli.common import fail, open_data
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="show",
    help="Print a user's session timeline with gold evidence marked.",
    examples=("prefscope show maya --query p1-open", "prefscope show maya --session maya-p1-e4a"),
    writes=False,
    order=70,
    details="`--query Q`, `--expression N`, `--session S`.",
)

STAR = "★"
#: Where a question is asked inside the history (PersonaMem cuts the context there).
ASKED = "▶"


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
    wb = open_data(ctx, must_exist=True)
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
        _print_timeline(bundle, query_id, expression, wb.settings.judge)


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


def _print_timeline(bundle, query_id: str | None, expression: int | None, judge_setting: str | None = None) -> None:
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
    benchmark = for_source(u.source)
    if benchmark is not None and benchmark.profile is not None:
        out.print(safe_text(f"{benchmark.title} user: {_profile_line(benchmark, judge_setting)}", style="dim"))
    if query is not None:
        line = safe_text(f"query {query.id} [{query.kind}]: ", style="bold")
        line.append(safe_text(query.text))
        out.print(line)
        detail = []
        if query.preference_id:
            detail.append(f"preference {query.preference_id}: {bundle.preference(query.preference_id).text}")
        detail += _named_values(benchmark, query.meta)
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


def _profile_line(benchmark: Benchmark, judge_setting: str | None) -> str:
    """What `prompt` and `run` take from its profile with no options: ``runs start from context
    prefeval-turns, turns 5, method prefeval-zero-shot, judge demo:heuristic (…)``."""
    from core.run.profile import Choice, prefscope_defaults, resolve

    r = resolve(Choice(), benchmark, prefscope_defaults(judge_setting), judge_setting)
    parts = ", ".join(f"{name} {value}" for name, value in r.applied)
    why = f" ({'; '.join(r.reasons)})" if r.reasons else ""
    return f"runs start from {parts}{why} (its profile; --profile none: prefscope's defaults)"


def _named_values(benchmark: Benchmark | None, meta: dict) -> list[str]:
    """The query's values its benchmark gives names to: ``LoCoMo category 4 single-hop``."""
    out = []
    for labels in benchmark.factor_labels if benchmark is not None else ():
        if labels.factor in meta:
            value = meta[labels.factor]
            name = labels.load().get(value)
            out.append(
                f"{benchmark.title} {labels.factor} {value} {name}"
                if name
                else f"{benchmark.title} {labels.factor} {value}"
            )
    return out


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
