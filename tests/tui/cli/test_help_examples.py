"""`--help` of every command ends with two examples, and `prefscope --help` documents exit codes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tui.cli import COMMANDS, main


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_ends_with_two_examples(name):
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    tail = result.output.rstrip().splitlines()[-3:]
    assert tail[0].strip() == "Examples:", result.output
    assert all(line.strip().startswith(("prefscope ", "PREFSCOPE_")) for line in tail[1:]), tail


def test_root_help_documents_exit_codes_and_ids():
    out = CliRunner().invoke(main, ["--help"]).output
    for code in ("0    ok", "1    failed", "2    usage error", "3    partly failed", "130  interrupted"):
        assert code in out
    assert "unique prefix" in out and out.rstrip().splitlines()[-3].strip() == "Examples:"
