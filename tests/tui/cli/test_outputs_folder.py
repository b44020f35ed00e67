"""Files written without a path of their own go to the outputs folder, which `prefscope paths`
names; `docs/make_screenshots.py --help` prints its usage and writes nothing."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from tests.conftest import REPO
from tests.tui.conftest import child_env
from tui.cli import main


def test_paths_names_the_outputs_folder_from_the_setting(tmp_path, monkeypatch):
    chosen = tmp_path / "my outputs"
    monkeypatch.setenv("PREFSCOPE_OUTPUTS_DIR", str(chosen))
    out = CliRunner().invoke(main, ["paths"], catch_exceptions=False).output
    assert f"outputs   {chosen}  (not created yet" in out


def test_paths_puts_the_default_outputs_folder_in_the_user_data_dir(tmp_path):
    out = CliRunner().invoke(main, ["paths"], catch_exceptions=False).output
    line = next(row for row in out.splitlines() if row.startswith("outputs"))
    assert str(tmp_path / "xdg-data" / "prefscope" / "outputs") in line  # XDG_DATA_HOME of the test


def test_make_screenshots_help_prints_usage_and_writes_nothing(tmp_path):
    shots = REPO / "docs" / "screenshots"
    before = {p.name: p.stat().st_mtime_ns for p in shots.iterdir()}
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "make_screenshots.py"), "--help"],
        cwd=tmp_path,
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "--out DIR" in done.stdout and "docs/screenshots" in done.stdout
    assert {p.name: p.stat().st_mtime_ns for p in shots.iterdir()} == before
    assert not any(tmp_path.glob("*.png")) and not any(tmp_path.glob("*.svg"))
