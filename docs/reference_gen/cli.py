"""docs/reference/cli.md: every command of the click group, from the commands themselves (their
usage, help, options) and their ``COMMAND`` declarations (one-line help, examples, whether it writes)."""

from __future__ import annotations

import re

import click

from docs.reference_gen import markdown as md
from tui.cli.command_info import CommandInfo

#: What click appends to an option's help: two spaces (none when there is no help), then ``[…]``.
_CLICK_NOTE = re.compile(r"(?:^|  )\[([^\[\]]*)\]\Z")

SOURCE = "the click commands in tui/cli/ and their `COMMAND` declarations"


def commands() -> list[tuple[CommandInfo, click.Command]]:
    """Every command module's declaration and click command, in help order (the modules themselves,
    not manifest.json: a command added without regenerating the manifest is listed too)."""
    from tui.cli.write_manifest import declared

    return [(info, command) for _, info, command in declared()]


def page(group: click.Group, listed: list[tuple[CommandInfo, click.Command]]) -> str:
    root = click.Context(group, info_name="prefscope", **group.context_settings)  # -h as well as --help
    summary = md.table(
        ("command", "what it does"),
        [(f"[`prefscope {info.name}`](#prefscope-{info.name})", md.text(info.help)) for info, _ in listed],
    )
    sections = [
        "Every command as `prefscope COMMAND --help` (or `-h`) prints it. Global options (`--db`, `--config`) "
        "go before or after the command: `prefscope --db lab.db runs`, `prefscope runs --db lab.db`.",
        summary,
        _root_section(group, root),
        *(_command_section(info, command, root) for info, command in listed),
    ]
    return md.page("Command line", SOURCE, *sections)


def _root_section(group: click.Group, ctx: click.Context) -> str:
    parts = [
        "## `prefscope`",
        md.block(_usage(group, ctx), "sh"),
        *md.help_text(group.help or ""),
        _options(group, ctx),
        *md.help_text(group.epilog or ""),
    ]
    return "\n\n".join(filter(None, parts))


def _command_section(info: CommandInfo, command: click.Command, parent: click.Context) -> str:
    ctx = click.Context(command, info_name=info.name, parent=parent)
    writes = (
        "Writes to the database." if info.writes else "Only reads the database: opens it read-only, never creates it."
    )
    parts = [
        f"## `prefscope {info.name}`",
        md.block(_usage(command, ctx), "sh"),
        *md.help_text(_without_examples(command.help or "")),
        md.text(info.details),
        _options(command, ctx),
        *md.help_text(_without_examples(command.epilog or "")),
        writes,
        "**Examples**\n\n" + md.block("\n".join(info.examples), "sh") if info.examples else "",
    ]
    return "\n\n".join(filter(None, parts))


def _usage(command: click.Command, ctx: click.Context) -> str:
    return " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])


def _without_examples(help_text: str) -> str:
    """The help or epilog less the examples paragraph `prefscope --help` appends (the page lists
    the declared examples itself)."""
    paragraphs = help_text.split("\n\n")
    return "\n\n".join(p for p in paragraphs if not p.lstrip("\b\n").startswith("Examples:"))


def _options(command: click.Command, ctx: click.Context) -> str:
    from tui.cli import GLOBAL_OPTIONS

    rows = []
    help_option = command.get_help_option(ctx)
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if not isinstance(param, click.Option) or record is None or param is help_option:
            continue  # arguments are in the usage line; hidden options stay hidden; -h is said once
        if param.name in GLOBAL_OPTIONS and not isinstance(command, click.Group):
            # said once in the page's intro; a command carries them only once the group has loaded
            # it, so listing them here would make the page depend on what ran before
            continue
        rows.append(_option_row(param, *record))
    return "**Options**\n\n" + md.table(("option", "what it does"), rows) if rows else ""


def _option_row(param: click.Option, names: str, help_text: str) -> tuple[str, str]:
    """The option's names and value (a long list of choices said as CHOICE, the choices in the
    description, so the column stays narrow) and what it does."""
    choices = getattr(param.type, "choices", None)
    if choices and len(choices) > 2 and not param.is_flag:
        names = re.sub(r"\[[^\]]*\]$", "CHOICE", names)  # click shows them as [a|b|c]
        listed = ", ".join(md.code(str(c)) for c in choices)
        return md.code(names), f"{_option_help(param, help_text)} CHOICE: one of {listed}."
    return md.code(names), _option_help(param, help_text)


def _option_help(param: click.Option, help_text: str) -> str:
    """The option's help, then what click says in brackets after it (``[default: 8000]``,
    ``[x>=1]``, ``[env var: …]``) as sentences, and whether it repeats or reads a variable."""
    said, extras = help_text, []
    note = _CLICK_NOTE.search(help_text)
    if note:
        said = help_text[: note.start()]
        extras = [_extra(item) for item in note.group(1).split("; ")]
    if param.multiple and "repeat" not in said.lower():
        extras.append("Repeatable.")
    envvars = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or [])
    extras += [f"Environment variable {md.code(name)}." for name in envvars if name not in help_text]
    return " ".join(filter(None, [md.text(said.strip()), *extras]))


def _extra(item: str) -> str:
    """One of click's bracketed notes as a sentence: ``default: 8000`` → Default: `8000`."""
    name, colon, value = item.partition(": ")
    if not colon:
        return "Required." if item == "required" else f"Range: {md.code(item)}."
    label = {"default": "Default", "env var": "Environment variable"}.get(name, md.text(name.capitalize()))
    return f"{label}: {md.code(value)}."
