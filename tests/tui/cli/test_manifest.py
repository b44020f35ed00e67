"""Each command is declared once, next to its code (``COMMAND`` in tui/cli/commands/<command>.py);
the help listing (tui/cli/manifest.json) and the README's command table are generated from those
declarations and must be current, and `prefscope --help` imports no command module."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import REPO
from tests.tui.conftest import child_env
from tui.cli import COMMANDS
from tui.cli.common import READ_ONLY_COMMANDS
from tui.cli.manifest import DECLARED
from tui.cli.write_manifest import declared, stale_manifest, stale_readme


def test_every_command_module_declares_one_command_named_after_it():
    commands = declared()  # a module without COMMAND, misnamed, or without its click command raises
    assert [info.name for _, info, _ in commands] == list(COMMANDS)
    assert all(click_command.name == info.name for _, info, click_command in commands)


def test_no_command_module_imports_another():
    """What two commands share lives in a helper module of tui/cli/, so each command stays one module."""
    folder = REPO / "tui" / "cli" / "commands"
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n.startswith("tui.cli.commands")], f"{path.name} imports {names}"


def test_the_manifest_is_current():
    assert stale_manifest(declared()) == ""


def test_the_readme_command_table_is_current():
    assert stale_readme(declared()) == ""


def test_read_only_commands_are_those_declared_not_writing():
    assert READ_ONLY_COMMANDS == {name for name, info in DECLARED.items() if not info.writes}
    assert {"users", "show", "runs", "export", "report", "agreement"} <= READ_ONLY_COMMANDS
    assert not READ_ONLY_COMMANDS & {"import", "run", "judge", "batch", "prompt", "compare", "demo"}


def test_help_and_the_workbench_start_import_no_command_module(tmp_path):
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "import tui.app, tui.cli.open_app\n"
        "from tui.cli import main\n"
        "assert CliRunner().invoke(main, ['--help']).exit_code == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('tui.cli.commands.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=child_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
