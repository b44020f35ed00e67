"""Running ``prefscope`` commands in-process against a real SQLite file (click's CliRunner)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tui.cli import main


def cli(db: str, *args: str) -> str:
    """Run one command on ``db``; fail the test with the command's output unless it exits 0."""
    result = CliRunner().invoke(main, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def unpaced_demo_models(monkeypatch):
    """Demo models answer at once (no streaming pace), so CLI tests stay fast."""
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
