"""The exit codes every command keeps, in one table: ``prefscope --help`` prints it and
docs/reference/exit-codes.md is generated from it (``python docs/gen_reference.py``).
Imports nothing, so ``prefscope --help`` stays instant."""

from __future__ import annotations

import textwrap

EXIT_OK = 0
EXIT_FAILED = 1
#: click's own: it exits 2 on an unknown option, command or value.
EXIT_USAGE = 2
EXIT_PARTIAL = 3
EXIT_INTERRUPTED = 130

#: (code, meaning), in the order `--help` lists them.
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "ok"),
    (
        EXIT_FAILED,
        "failed, the message says why and what to do; also a run, judge or batch whose every model, "
        "judgment or cell failed (e.g. a key unset)",
    ),
    (EXIT_USAGE, "usage error: an unknown option, command or value"),
    (EXIT_PARTIAL, "partly failed: some models, judgments or batch cells failed; the rest are stored"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl+C): partial answers are stored as cancelled"),
)


def help_block() -> str:
    """The table as ``--help`` prints it: one code per line, meanings wrapped under their start."""
    rows = [
        textwrap.fill(meaning, width=74, initial_indent=f"  {code:<5}", subsequent_indent=" " * 7)
        for code, meaning in EXIT_CODES
    ]
    return "Exit codes:\n" + "\n".join(rows)
