"""`prefscope` command line. With no subcommand it opens the workbench.

Subcommands live one per module in this package and are imported only when invoked, so
``prefscope --help`` and the TUI start without loading litellm, anthropic or torch.
"""

from __future__ import annotations

import importlib

import click

#: command name -> "module:attribute" (a click.Command). Order is the help order.
COMMANDS: dict[str, str] = {
    "demo": "tui.cli.open_app:demo",
    "serve": "tui.cli.open_app:serve",
    "import": "tui.cli.data:import_cmd",
    "users": "tui.cli.data:users",
    "show": "tui.cli.data:show",
    "schema": "tui.cli.data:schema",
    "paths": "tui.cli.data:paths",
    "prompt": "tui.cli.prompt:prompt",
    "run": "tui.cli.run:run",
    "runs": "tui.cli.run:runs",
    "judge": "tui.cli.judge:judge",
    "attributes": "tui.cli.judge:attributes",
    "relevance": "tui.cli.judge:relevance",
    "pairwise": "tui.cli.pairwise:pairwise",
    "batch": "tui.cli.batch:batch",
    "export": "tui.cli.export:export",
    "report": "tui.cli.export:report",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help without importing each command's module (keeps --help instant).
        rows = [(name, HELP.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


HELP = {
    "demo": "Open the workbench on the sample users with offline demo models.",
    "serve": "Serve the workbench in a browser (textual-serve).",
    "import": "Import a dataset file or folder (auto-detected format).",
    "users": "List imported users.",
    "show": "Print a user's session timeline with gold evidence marked.",
    "schema": "Print the JSON Schema of the native bundle format.",
    "paths": "Print where the database, config and cache live.",
    "prompt": "Print the exact prompt plan for a user, query and method.",
    "run": "Stream models side by side for one case and store the run.",
    "runs": "List stored runs.",
    "judge": "Re-judge a stored run without regenerating.",
    "attributes": "Extract or list a user's attributes.",
    "relevance": "Show relevance decisions for a run.",
    "pairwise": "InterPref pass and win rate for two runs with opposed preferences.",
    "batch": "Run a grid of cases with bounded concurrency (resumable).",
    "export": "Export runs to CSV or JSONL.",
    "report": "Aggregate tables of stored runs (by model, method, context …).",
}


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", type=click.Path(dir_okay=False), envvar="PREFSCOPE_DB", help="SQLite database file.")
@click.option("--config", type=click.Path(dir_okay=False), envvar="PREFSCOPE_CONFIG", help="Settings TOML file.")
@click.pass_context
def main(ctx: click.Context, db: str | None, config: str | None) -> None:
    """prefscope: take preference-following failures apart, model by model."""
    ctx.ensure_object(dict)
    ctx.obj["db"] = db
    ctx.obj["config"] = config
    if ctx.invoked_subcommand is None:
        from tui.cli.open_app import open_app

        open_app(ctx.obj, demo=False)
