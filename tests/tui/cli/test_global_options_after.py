"""`--db` and `--config` work after the command's name too (`prefscope paths --db x`), as before it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.cli_runner import cli
from tui.cli import COMMANDS, main

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"


def test_db_after_the_command_is_the_database_it_uses(tmp_path):
    db = tmp_path / "after.db"
    cli(str(db), "import", str(SAMPLE / "users"))
    result = CliRunner().invoke(main, ["users", "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "maya" in result.output
    out = CliRunner().invoke(main, ["paths", "--db", str(tmp_path / "x.db")], catch_exceptions=False).output
    assert f"database  {tmp_path / 'x.db'}  (not created yet)" in out


def test_config_after_the_command_is_the_file_it_reads(tmp_path):
    config = tmp_path / "lab.toml"
    config.write_text(f'outputs_dir = "{tmp_path / "figs"}"\n')
    out = CliRunner().invoke(main, ["paths", "--config", str(config)], catch_exceptions=False).output
    assert f"config    {config}  (exists)" in out and f"outputs   {tmp_path / 'figs'}" in out


def test_the_later_db_wins_and_every_command_takes_both(tmp_path):
    late = tmp_path / "late.db"
    out = CliRunner().invoke(main, ["--db", str(tmp_path / "early.db"), "paths", "--db", str(late)]).output
    assert f"database  {late}" in out
    for name in COMMANDS:
        help_text = CliRunner().invoke(main, [name, "--help"]).output
        assert "--db FILE" in help_text and "--config FILE" in help_text, name
