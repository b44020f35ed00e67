"""`prefscope` command line. With no subcommand it opens the workbench.

Subcommands live one per module in :mod:`tui.cli.commands`, each declaring its name, help, examples
and whether it writes (``COMMAND``). They are imported only when invoked: the listing comes from
``tui/cli/manifest.json`` (:mod:`tui.cli.manifest`), generated from those declarations, so
``prefscope --help`` and the TUI start without loading litellm, anthropic or torch.
"""

from __future__ import annotations

import importlib

import click

from tui.cli.exit_codes import help_block
from tui.cli.manifest import COMMANDS, DECLARED

__all__ = ["COMMANDS", "main"]


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        examples = DECLARED[name].examples
        if examples and "Examples:" not in (command.epilog or ""):
            lines = "\n".join(f"  {example}" for example in examples)
            command.epilog = "\n\n".join(filter(None, [command.epilog, f"\b\nExamples:\n{lines}"]))
        _take_global_options(command)
        return command

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        """The group's own options (``--db``, ``--config``): a usage error naming a hostile path is
        shown through ``terminal_safe`` like every other (:meth:`invoke`)."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.ClickException as exc:
            from tui.cli.errors import terminal_safe_click_error

            terminal_safe_click_error(exc)
            raise

    def invoke(self, ctx: click.Context):
        """Every command (and the TUI) under one handler: a database damaged past the pages the open
        checks read, a model id no provider serves, a full disk, an unreadable or special file or a
        file that is not UTF-8, or running out of memory end in one line and exit 1, not a traceback;
        Ctrl+C exits 130."""
        import sqlite3

        args = [*ctx._protected_args, *ctx.args]  # the subcommand's, to name its files on an OSError
        try:
            return super().invoke(ctx)
        except sqlite3.DatabaseError as exc:
            from tui.cli.errors import database_failure

            database_failure(ctx, exc)
        except UnicodeDecodeError as exc:
            from tui.cli.errors import decode_failure

            decode_failure(exc)
        except click.Abort as exc:  # (before RuntimeError, its base) a prompt's Ctrl+C; a declined
            # confirmation stays "Aborted!", exit 1
            if isinstance(exc.__context__, KeyboardInterrupt):
                from tui.cli.errors import interrupted

                interrupted()
            raise
        except (ValueError, RuntimeError) as exc:
            from tui.cli.errors import known_failure

            known_failure(ctx, exc)
            raise
        except OSError as exc:
            from tui.cli.errors import os_failure

            os_failure(self, ctx, args, exc)
            raise
        except KeyboardInterrupt:
            from tui.cli.errors import interrupted

            interrupted()
        except MemoryError:
            from tui.cli.errors import out_of_memory

            out_of_memory(ctx)
        except click.ClickException as exc:  # a usage error or a command's refusal: click prints it
            from tui.cli.errors import terminal_safe_click_error

            terminal_safe_click_error(exc)
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help without importing each command's module (keeps --help instant).
        rows = [(name, DECLARED[name].help) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


#: The group's options every command takes after its name too (`prefscope paths --db x` as
#: `prefscope --db x paths`): name -> help.
GLOBAL_OPTIONS = {
    "db": "SQLite database file (also before the command: prefscope --db FILE COMMAND).",
    "config": "Settings TOML file (also before the command: prefscope --config FILE COMMAND).",
}


def _take_global_options(command: click.Command) -> None:
    """Give ``command`` the group's ``--db`` / ``--config`` (once: commands are module singletons).
    A value given after the command's name is stored where the group's own goes (the root
    context's object), so every command reads it the same way; given both before and after the
    name, the later one wins, as for any option given twice."""
    taken = {p.name for p in command.params}
    for name, help_text in GLOBAL_OPTIONS.items():
        if name in taken:
            continue

        def store(ctx: click.Context, _param: click.Parameter, value: str | None, name: str = name) -> None:
            if value is not None:
                ctx.find_root().ensure_object(dict)[name] = value

        command.params.append(
            click.Option(
                [f"--{name}"],
                type=click.Path(dir_okay=False),
                expose_value=False,  # the command's function never sees it: it reads the root's
                is_eager=True,  # before other options' callbacks, which may read the settings
                callback=store,
                help=help_text,
            )
        )


EPILOG = f"""Ids: every command takes a full run, user or query id or any unique prefix of it (a run also by
the start of its random tail, the short form `prefscope runs` prints in a narrow terminal).

\b
{help_block()}

\b
Examples:
  prefscope demo
  prefscope run maya p1-open --model demo:oracle --model openai:gpt-4o-mini"""


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EPILOG,
)
@click.option("--db", type=click.Path(dir_okay=False), envvar="PREFSCOPE_DB", help="SQLite database file.")
@click.option("--config", type=click.Path(dir_okay=False), envvar="PREFSCOPE_CONFIG", help="Settings TOML file.")
@click.option("--user", default=None, help="Open the workbench on this user (an id or a unique prefix of one).")
@click.pass_context
def main(ctx: click.Context, db: str | None, config: str | None, user: str | None) -> None:
    """prefscope: take preference-following failures apart, model by model."""
    ctx.ensure_object(dict)
    ctx.obj["db"] = db
    ctx.obj["config"] = config
    ctx.obj["user"] = user  # `prefscope --user ID demo` opens the demo on it too
    if ctx.invoked_subcommand is None:
        from tui.cli.open_app import open_app

        open_app(ctx.obj, demo=False, user=user)
