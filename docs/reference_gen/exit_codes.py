"""docs/reference/exit-codes.md: the table every command exits by (:mod:`tui.cli.exit_codes`)."""

from __future__ import annotations

from docs.reference_gen import markdown as md
from tui.cli.exit_codes import EXIT_CODES

SOURCE = "`tui.cli.exit_codes.EXIT_CODES`"


def page() -> str:
    rows = [(md.code(str(code)), md.text(meaning)) for code, meaning in EXIT_CODES]
    about = "Every `prefscope` command exits with one of these codes (`prefscope --help` lists them too)."
    return md.page("Exit codes", SOURCE, about, md.table(("code", "meaning"), rows))
