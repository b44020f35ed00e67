"""`prefscope import / users / show / schema / paths` on real files through click's CliRunner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.formats.native import dump_bundle, dump_filler
from storage.db import open_db, table_counts
from tests.conftest import SAMPLE_DATA, dataset
from tests.storage.bundles import filler_pool, rich_bundle
from tui.cli import main


def run(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _counts() -> dict[str, int]:
    db = open_db(os.environ["PREFSCOPE_DB"])
    try:
        return table_counts(db)
    finally:
        db.close()


def _star_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.lstrip().startswith("★")]


@pytest.fixture
def alex(tmp_path) -> Path:
    return _write(tmp_path / "in", "alex.json", dump_bundle(rich_bundle("alex")))


def test_import_users_show(alex):
    result = run("import", str(alex))
    assert result.exit_code == 0, result.output
    assert "1 user added" in result.output and "native" in result.output

    listing = run("users")
    assert listing.exit_code == 0
    assert "alex" in listing.output and "Alex Martin" in listing.output

    shown = run("show", "alex")
    assert shown.exit_code == 0, shown.output
    assert "query q1 [open]" in shown.output
    stars = _star_lines(shown.output)
    assert len(stars) == 1 and "s-pref-1" in stars[0]  # expression 1 evidence of q1's preference p1
    assert "filler ×3" in shown.output  # consecutive fillers folded into one row
    assert "dim: preference sessions of other expression types" in shown.output


def test_show_expression_and_query_choices(alex):
    run("import", str(alex))
    e4 = run("show", "alex", "--expression", "4")
    assert [("s-pref-4a" in line) for line in _star_lines(e4.output)] == [True]
    cupid = run("show", "alex", "--query", "q-cupid")
    assert [("s-task" in line) for line in _star_lines(cupid.output)] == [True]
    generalized = run("show", "alex", "--query", "q-gen", "--expression", "1")
    # a generalized preference's evidence is its originals': p1's E1 session, p2's untyped (0) one
    assert [line.split()[-2] for line in _star_lines(generalized.output)] == ["s-pref-1", "s-pref-4a"]
    unknown = run("show", "alex", "--query", "nope")
    assert unknown.exit_code == 1 and "no query 'nope'" in unknown.stderr


def test_show_session_prints_turns_literally(tmp_path):
    bundle = rich_bundle("alex")
    markup = bundle.model_copy(deep=True)
    markup.sessions[0].turns[0].content = "[bold]not markup[/bold] and [link=x]y[/link]"
    path = _write(tmp_path / "in", "m.json", dump_bundle(markup))
    run("import", str(path))
    result = run("show", "alex", "--session", "s-life")
    assert result.exit_code == 0
    assert "[bold]not markup[/bold] and [link=x]y[/link]" in result.output
    assert "#1 assistant" in result.output and "(D1:2)" in result.output
    missing = run("show", "alex", "--session", "nope")
    assert missing.exit_code == 1 and "no session 'nope'" in missing.stderr


def test_broken_later_file_leaves_the_database_unchanged(tmp_path, alex):
    assert run("import", str(alex)).exit_code == 0
    before = _counts()
    folder = tmp_path / "batch"
    _write(folder, "a_good.json", dump_bundle(rich_bundle("newcomer")))
    _write(folder, "b_pool.json", dump_filler(filler_pool("fresh-pool")))
    broken = json.loads(dump_bundle(rich_bundle("zed")))
    broken["sessions"][1]["turns"][0]["role"] = "usr"
    _write(folder, "c_broken.json", json.dumps(broken))
    result = run("import", str(folder))
    assert result.exit_code == 1
    assert "c_broken.json" in result.stderr and "role" in result.stderr
    assert _counts() == before
    assert "newcomer" not in run("users").output


def test_reimport_says_replaced(alex):
    run("import", str(alex))
    again = run("import", str(alex))
    assert again.exit_code == 0 and "1 replaced (alex)" in again.output


def test_errors_exit_1_without_creating_a_database(tmp_path):
    missing = run("import", str(tmp_path / "nope.json"))
    assert missing.exit_code == 1 and "no such file" in missing.stderr
    assert run("users").exit_code == 1
    assert not Path(os.environ["PREFSCOPE_DB"]).exists()


def test_user_speaker_is_for_locomo_only(alex):
    result = CliRunner().invoke(main, ["import", str(alex), "--user-speaker", "b"])
    assert result.exit_code == 1
    assert "user_speaker does not apply to the native format" in result.output + result.stderr


def test_db_option_wins_over_env(tmp_path, alex):
    other = tmp_path / "elsewhere" / "other.db"
    assert run("--db", str(other), "import", str(alex)).exit_code == 0
    assert other.exists() and not Path(os.environ["PREFSCOPE_DB"]).exists()
    assert "alex" in run("--db", str(other), "users").output


def test_schema_is_the_native_bundle_schema():
    result = run("schema")
    doc = json.loads(result.output)
    assert doc["properties"]["format"]["const"] == "prefscope.user"
    assert doc["properties"]["version"]["const"] == 1
    assert {"format", "version", "user"} <= set(doc["required"])
    assert "sessions" in doc["properties"] and "Session" in doc["$defs"]
    filler = json.loads(run("schema", "--filler").output)
    assert filler["properties"]["format"]["const"] == "prefscope.filler"


def test_paths():
    result = run("paths")
    assert result.exit_code == 0
    flat = result.output.replace("\n", "")
    assert os.environ["PREFSCOPE_DB"] in flat and "config" in flat and "data dir" in flat


def test_prefeval_import_then_users_and_show():
    path = dataset("prefeval")
    result = run("import", str(path))
    assert result.exit_code == 0, result.output + result.stderr
    listing = run("users")
    assert "prefeval-travel_restaurant-000" in listing.output
    shown = run("show", "prefeval-travel_restaurant-000")
    assert shown.exit_code == 0
    stars = _star_lines(shown.output)
    assert len(stars) == 1 and "explicit" in stars[0]


def test_locomo_with_user_speaker():
    path = dataset("locomo", "locomo10_conv-30.json")
    result = run("import", str(path), "--user-speaker", "b")
    assert result.exit_code == 0, result.output + result.stderr
    assert "1 user added" in result.output


def test_sample_data_imports():
    result = run("import", str(SAMPLE_DATA))
    assert result.exit_code == 0, result.output + result.stderr


def test_a_database_from_a_newer_prefscope_is_reported_not_crashed(alex):
    run("import", str(alex))
    db = open_db(os.environ["PREFSCOPE_DB"])
    db.execute("INSERT INTO migrations (version, name, applied_at) VALUES (999, 'm999_future', 'x')")
    db.close()
    result = run("users")
    assert result.exit_code == 1 and "999" in result.stderr and "upgrade prefscope" in result.stderr
