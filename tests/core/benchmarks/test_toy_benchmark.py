"""Acceptance (issue 33): a benchmark package outside prefscope, registered only through entry-point
metadata, is used by every command with no edit to prefscope.

tests/fixtures/toy_benchmark/ is a package with its own pyproject.toml (one `prefscope.benchmarks`
entry point). `pip install` would write a `<name>.dist-info/` with that entry point next to the
package; this test writes the same two metadata files into a temporary folder on PYTHONPATH, which
importlib.metadata discovers exactly as it does an installed package, so the venv is not touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.tui.conftest import child_env

TOY = REPO / "tests" / "fixtures" / "toy_benchmark"


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """(run prefscope with the toy benchmark installed, the toy data file)."""
    root = tmp_path_factory.mktemp("toy")
    site = root / "site"
    shutil.copytree(TOY / "toy_benchmark", site / "toy_benchmark")
    info = site / "toy_benchmark-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-benchmark\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[prefscope.benchmarks]\ntoy = toy_benchmark:BENCHMARK\n")
    env = child_env(root / "home", PYTHONPATH=f"{REPO}{os.pathsep}{site}")
    db = root / "toy.db"

    def prefscope(*args: str) -> subprocess.CompletedProcess:
        out = subprocess.run(
            [sys.executable, "-m", "tui.cli", "--db", str(db), *args],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, (args, out.stdout[-2000:], out.stderr[-2000:])
        return out

    return prefscope, site / "toy_benchmark" / "quiz.toy"


def test_the_toy_declares_its_entry_point_in_its_own_pyproject():
    text = (TOY / "pyproject.toml").read_text()
    assert '[project.entry-points."prefscope.benchmarks"]' in text
    assert 'toy = "toy_benchmark:BENCHMARK"' in text


def test_a_benchmark_installed_by_metadata_works_in_every_command(toy):
    prefscope, data = toy
    listing = json.loads(prefscope("benchmarks", "--json").stdout)
    toy_entry = next(b for b in listing["benchmarks"] if b["name"] == "toy")
    assert toy_entry["formats"] == ["toy"] and toy_entry["methods"] == ["toy-ask"]
    assert toy_entry["judges"] == ["toy-exact"] and toy_entry["report_sections"] == ["toy-accuracy"]
    assert toy_entry["profile"]["method"] == "toy-ask"
    # after the built-ins, before the generic fallbacks
    assert [b["name"] for b in listing["benchmarks"]][-1] == "toy"
    assert "toy" in prefscope("benchmarks").stdout

    imported = prefscope("import", str(data))  # auto-detected: no --format
    assert "(toy)" in imported.stdout

    methods = prefscope("prompt", "--list-methods").stdout.splitlines()
    names = [line.split()[0] for line in methods]
    assert "toy-ask" in names and names[-1] == "generic"

    plan = json.loads(prefscope("prompt", "toy-ada", "q-drink", "--method", "toy-ask", "--json").stdout)
    text = json.dumps(plan)
    assert "Answer in one word, keeping in mind what I told you earlier." in text
    assert "I only drink green tea." in text and "Which drink should I order?" in text

    judge_help = " ".join(prefscope("judge", "--help").stdout.split())
    assert "toy-exact" in judge_help and "longmemeval" in judge_help and "locomo" in judge_help

    prefscope("run", "toy-ada", "q-drink", "--method", "toy-ask", "--model", "demo:oracle", "--plain")
    run_id = json.loads(prefscope("runs", "--json").stdout)[0]["id"]
    judged = prefscope("judge", run_id, "--judge", "toy-exact")
    assert "toy-exact" in judged.stdout and "1 judgments stored" in judged.stdout

    tables = {t["title"]: t for t in json.loads(prefscope("report", "--json").stdout)["tables"]}
    assert tables["Toy exact-match accuracy"]["rows"] == [{"model": "demo:oracle", "n": 1, "accuracy": 1.0}]
    assert "Toy exact-match accuracy" in prefscope("report", "--no-chart").stdout


def test_without_the_metadata_prefscope_knows_no_toy(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "benchmarks", "--json"],
        cwd=tmp_path,
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "toy" not in [b["name"] for b in json.loads(out.stdout)["benchmarks"]]
