"""`prefscope demo`: the workbench on the sample users with the offline demo models."""

from __future__ import annotations

import click

from tui.cli.command_info import CommandInfo
from tui.cli.open_app import open_app

COMMAND = CommandInfo(
    name="demo",
    help="Open the workbench on the sample users with offline demo models.",
    examples=("prefscope demo", "prefscope --db /tmp/demo.db demo"),
    writes=True,
    order=10,
    details="On Maya, with the three demo models.",
)


@click.command()
@click.option("--user", "user", default=None, help="Open on this user (an id or a unique prefix of one).")
@click.pass_obj
def demo(obj: dict, user: str | None) -> None:
    """Open the workbench on the sample users with the offline demo models."""
    open_app(obj, demo=True, user=user or obj.get("user"))
