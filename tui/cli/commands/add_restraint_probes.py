"""`prefscope add-restraint-probes`: give stored users generated restraint probes (questions their
preference should not change, :mod:`core.analysis.restraint_probes`), so `report --diagnosis` can
label an answer that drags the preference in `misapplied` on any benchmark. Idempotent."""

from __future__ import annotations

import json
import shlex

import click

from core.text.terminal_safe import one_line
from tui.cli.command_info import CommandInfo
from tui.cli.common import open_workbench, user_ids_of

COMMAND = CommandInfo(
    name="add-restraint-probes",
    help="Add generated restraint probes (the preference should not change the answer) to users.",
    examples=(
        "prefscope add-restraint-probes --user maya",
        "prefscope add-restraint-probes --user 'prefeval-*' --json | jq -r '.users[].added[]'",
    ),
    writes=True,
    order=175,
    details="One per preference the user's queries bear, id `<query>-restraint`; judge them with `--judge restraint`.",
)


@click.command("add-restraint-probes")
@click.option(
    "--user",
    "users",
    multiple=True,
    help="User id, unique prefix or pattern such as 'prefeval-*' (repeatable; default every user).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: per user the query ids added and already stored.")
@click.pass_context
def add_restraint_probes(ctx: click.Context, users: tuple[str, ...], as_json: bool) -> None:
    """Add restraint probes to stored users: per preference their queries bear, a preference-neutral
    question (ours: arithmetic, units, capitals, grammar, definitions) sharing no content word with
    the preference or its query, stored as the open query `<query id>-restraint` with
    meta.restraint = true. Running it again adds nothing. Answer them with `prefscope batch --query '*-restraint'
    --judge restraint`; `prefscope report --diagnosis` then counts `misapplied` answers."""
    from app.restraint_probes import add_restraint_probes as add

    wb = open_workbench(ctx.obj)
    try:
        ids = user_ids_of(wb, users) if users else wb.user_ids()
        sets = add(wb, ids)
    finally:
        wb.close()
    total = sum(len(s.added) for s in sets)
    if as_json:
        doc = {
            "added": total,
            "users": [
                {"id": s.user_id, "added": [q.id for q in s.added], "kept": list(s.kept), "note": s.note} for s in sets
            ],
        }
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    width = max((len(one_line(s.user_id)) for s in sets), default=0)
    for s in sets:
        line = f"{one_line(s.user_id):<{width}}  {len(s.added)} added"
        if s.kept:
            line += f", {len(s.kept)} already stored"
        if s.note:
            line += f": {one_line(s.note)}"
        click.echo(line)
    with_probes = [s for s in sets if s.added]
    click.echo(f"{total} restraint probes added to {len(with_probes)} user{'s' * (len(with_probes) != 1)}.")
    first = next((s for s in sets if s.added or s.kept), None)
    if first is not None:
        click.echo(
            f"Answer them: prefscope batch --user {one_line(shlex.quote(first.user_id))} --query '*-restraint' "
            "--model MODEL --judge restraint, then prefscope report --diagnosis (ids: --json)."
        )
