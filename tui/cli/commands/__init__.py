"""The `prefscope` subcommands: one module per command, named after it (``import`` is ``import_``,
``audit-judge`` is ``audit_judge``), each with its ``COMMAND`` declaration
(:class:`tui.cli.command_info.CommandInfo`). Only the group in :mod:`tui.cli` imports them, when a
command runs; helpers they share stay in :mod:`tui.cli`."""
