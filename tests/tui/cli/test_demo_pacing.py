"""Demo pacing is for watching answers stream in the workbench: `batch` and `diagnose --probe` run
the demo models at full speed unless the pace was set (config or PREFSCOPE_DEMO_TOKENS_PER_S)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from core.providers import demo
from tests.conftest import REPO
from tui.cli import main

MAYA = REPO / "sample_data" / "users" / "maya.json"


@pytest.fixture
def paces(monkeypatch, tmp_path):
    """The pace every demo provider made in the command was given."""
    monkeypatch.delenv("PREFSCOPE_DEMO_TOKENS_PER_S", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user config file
    seen: list[float] = []
    made = demo.DemoProvider.from_settings.__func__  # type: ignore[attr-defined]

    def recording(cls, settings, response_cache):
        provider = made(cls, settings, response_cache)
        seen.append(provider.tokens_per_s)
        return provider

    monkeypatch.setattr(demo.DemoProvider, "from_settings", classmethod(recording))
    return seen


def invoke(db, *args):
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 0, result.output
    return result.output


BATCH = ("batch", "--name", "b", "--user", "maya", "--query", "p1-open", "--model", "demo:oracle", "-y")


def test_a_demo_batch_and_its_probes_run_unpaced(tmp_path, paces):
    db = tmp_path / "p.db"
    invoke(db, "import", str(MAYA))
    invoke(db, *BATCH)
    invoke(db, "diagnose", "--batch", "b", "--probe")
    assert paces and set(paces) == {0}, paces


def test_a_pace_that_was_asked_for_is_kept(tmp_path, paces, monkeypatch):
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "5000")
    db = tmp_path / "p.db"
    invoke(db, "import", str(MAYA))
    invoke(db, *BATCH)
    assert paces and set(paces) == {5000}, paces
