"""A grid file is checked like the settings file: a misspelt key (at the top level or in a table)
is refused with the file, the key, its table and the nearest valid key, and a wrong type is one
line per problem (file, key path, what was expected, what was given), never pydantic's dump.

Real files through the real command: ``prefscope batch --grid FILE --dry-run`` on a real SQLite
file holding the sample users."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)
from tui.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"

#: A valid grid: one user, one query, one model (the README's keys, minus the sweep).
VALID = (
    'users = ["maya"]\n'
    'queries = ["p1-open"]\n'
    "expression_types = [1]\n"
    'contexts = ["simple"]\n'
    'methods = ["zero-shot"]\n'
    'models = ["demo:generic"]\n'
)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("grid-typos") / "g.db")
    cli(path, "import", str(SAMPLE / "users"))
    return path


def dry_run(db: str, grid: Path):
    return CliRunner().invoke(main, ["--db", db, "batch", "--grid", str(grid), "--dry-run"])


def message_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "body,typo,nearest,table",
    [
        ('judgs = ["demo:heuristic"]\n', "judgs", "judges", None),
        ("repeat = 3\n", "repeat", "repeats", None),
        ("[method_option]\nk = 3\n", "method_option", "method_options", None),
        ("[concurrency]\nrunz = 2\n", "runz", "runs", "concurrency"),
        ('[[models]]\nid = "demo:oracle"\ntemprature = 0.2\n', "temprature", "temperature", "models"),
    ],
)
def test_a_misspelt_key_is_refused_naming_the_nearest_one(db, tmp_path, body, typo, nearest, table):
    grid = tmp_path / "typo.toml"
    text = VALID.replace('models = ["demo:generic"]\n', "") if "[[models]]" in body else VALID
    grid.write_text(text + body)
    result = dry_run(db, grid)
    assert result.exit_code != 0, result.output
    lines = message_lines(result.output)
    assert len(lines) == 1, result.output
    line = lines[0]
    assert str(grid) in line and repr(typo) in line and f"did you mean {nearest!r}" in line, line
    if table:
        assert f"[{table}]" in line or f"[[{table}]]" in line, line
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "body,path,given",
    [
        ('repeats = "three"\n', "repeats", "'three'"),
        ("[concurrency]\nruns = [2]\n", "concurrency.runs", "[2]"),
        ('seeds = ["zero"]\n', "seeds[0]", "'zero'"),
        ("users = 5\n", "users", "5"),
    ],
)
def test_a_wrong_type_is_one_line_without_a_pydantic_dump(db, tmp_path, body, path, given):
    grid = tmp_path / "wrong.toml"
    text = VALID.replace('users = ["maya"]\n', "") if body.startswith("users") else VALID
    grid.write_text(text + body)
    result = dry_run(db, grid)
    assert result.exit_code != 0, result.output
    lines = message_lines(result.output)
    assert len(lines) == 1, result.output
    line = lines[0]
    assert str(grid) in line and path in line and "expected" in line and given in line, line
    assert "pydantic" not in result.output.lower() and "https://" not in result.output


def test_every_problem_gets_its_own_line(db, tmp_path):
    grid = tmp_path / "two.toml"
    grid.write_text(VALID + 'repeat = 3\ntemperature = "warm"\n')
    result = dry_run(db, grid)
    assert result.exit_code != 0
    lines = message_lines(result.output)
    assert len(lines) == 2, result.output
    assert any("'repeat'" in line and "'repeats'" in line for line in lines), lines
    assert any("temperature" in line and "'warm'" in line for line in lines), lines


def test_a_valid_grid_is_still_accepted(db, tmp_path):
    grid = tmp_path / "ok.toml"
    grid.write_text(
        VALID + 'judges = ["demo:heuristic"]\nrepeats = 2\nevidence_depth = 0.5\n'
        "[method_options]\nk = 3\n[concurrency]\nruns = 2\nper_provider = 1\n"
    )
    result = dry_run(db, grid)
    assert result.exit_code == 0, result.output
    assert "2 answers per cell" in result.output, result.output


def test_the_documented_grid_is_still_accepted(db, tmp_path):
    page = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "export-for-a-paper.md").read_text()
    body = page.split('```toml title="fig5.toml"\n', 1)[1].split("```", 1)[0]
    grid = tmp_path / "fig5.toml"
    grid.write_text(body.replace('["maya", "priya"]', '["maya"]'))
    result = dry_run(db, grid)
    assert result.exit_code == 0, result.output
