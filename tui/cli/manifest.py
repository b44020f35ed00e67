"""The commands as ``prefscope --help`` and the workbench list them, read from ``manifest.json``
beside this file, which ``python -m tui.cli.write_manifest`` generates from the ``COMMAND``
declarations in tui/cli/commands/ (never edited by hand): the listing costs no command import."""

from __future__ import annotations

import json
from pathlib import Path

from tui.cli.command_info import CommandInfo

_LISTING = json.loads(Path(__file__).with_name("manifest.json").read_text(encoding="utf-8"))["commands"]

#: command name -> its click command ("module:attribute"), in help order.
COMMANDS: dict[str, str] = {c["name"]: c["target"] for c in _LISTING}

#: command name -> its declaration, in help order.
DECLARED: dict[str, CommandInfo] = {
    c["name"]: CommandInfo(**{**{k: v for k, v in c.items() if k != "target"}, "examples": tuple(c["examples"])})
    for c in _LISTING
}
