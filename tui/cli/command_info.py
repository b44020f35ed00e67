"""What a command says about itself, declared once next to its code.

Each module in :mod:`tui.cli.commands` holds one click command and its ``COMMAND = CommandInfo(...)``.
``python -m tui.cli.write_manifest`` copies the declarations into ``tui/cli/manifest.json`` (so
``prefscope --help`` lists the commands without importing them) and into the README's command table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandInfo:
    #: What the user types: ``prefscope <name>``.
    name: str
    #: One line for ``prefscope --help`` and the README's table.
    help: str
    #: Shown at the end of the command's ``--help`` (two, each starting with ``prefscope``).
    examples: tuple[str, ...]
    #: False: it only reads the database, opens it read-only and never creates it.
    writes: bool
    #: Place in the help listing and the README's table (smaller first; the built-ins count in tens).
    order: int
    #: More for the README's table only: the options worth knowing about.
    details: str = ""
