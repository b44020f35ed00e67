"""Input that means nothing, or means two things, is refused or reported, never silently taken:

- ``--since`` that is not an ISO date or date-time is a usage error (exit 2) naming the value and
  the expected form, in every command reading stored runs (not an empty report, exit 0);
- ``import-results``: a record repeated in one file is skipped and counted, naming its line and
  the line it repeats (``--keep-duplicates`` stores it);
- ``annotate --import``: one annotator giving one answer's dimension two different scores in one
  CSV imports nothing and names both lines;
- a ``[keymap]`` with an unknown binding id, a key that cannot fire, or quit left without its key
  is refused in one line naming the config file and the entry.

Real files through the real commands on real SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli
from tui.cli import main


def _records(n: int = 2) -> list[dict]:
    return [
        {
            "preference": f"I avoid seafood {i}.",
            "question": f"Where should I eat in Lisbon {i}?",
            "response_to_pref": "Noted.",
            "response_to_q": "Try a steakhouse, no seafood.",
        }
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def runs_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("since")
    folder = root / "results" / "remind" / "travel_restaurant"
    folder.mkdir(parents=True)
    (folder / "claude3hk_travel_restaurant_2interturn.json").write_text(json.dumps(_records()))
    db = str(root / "s.db")
    cli(db, "import-results", str(root / "results"))
    return db


def invoke(db: str, *args: str):
    return CliRunner().invoke(main, ["--db", db, *args])


# --- (a) --since ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["report"], ["export", "--format", "jsonl"], ["agreement"], ["audit-judge", "demo:heuristic", "--no-pairs"]],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize("value", ["garbage", "2026-13-01", "yesterday", "01/05/2026"])
def test_a_bad_since_is_a_usage_error_naming_the_value(runs_db, command, value):
    result = invoke(runs_db, *command, "--since", value)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(lines) == 1, result.output
    assert "--since" in lines[0] and repr(value) in lines[0] and "ISO date" in lines[0], lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "value,rows",
    [("2000-01-01", 2), ("2000-01-01T10:30", 2), ("2000-01-01T10:30:00+02:00", 2), ("2999-01-01", 0)],
)
def test_a_good_since_still_selects(runs_db, value, rows):
    result = invoke(runs_db, "export", "--format", "jsonl", "--since", value)
    assert result.exit_code == 0, result.output
    assert len([line for line in result.output.splitlines() if line.startswith("{")]) == rows


def test_an_offset_since_compares_in_utc(runs_db):
    """Stored times are UTC: a time with an offset is converted, not compared as text."""
    runs = json.loads(cli(runs_db, "runs", "--json"))
    import datetime as dt

    first = min(dt.datetime.fromisoformat(r["created_at"]) for r in runs)
    later = (first + dt.timedelta(hours=1)).astimezone(dt.timezone(dt.timedelta(hours=-5)))
    result = invoke(runs_db, "export", "--format", "jsonl", "--since", later.isoformat())
    assert result.exit_code == 0, result.output
    assert [line for line in result.output.splitlines() if line.startswith("{")] == []


# --- (b) duplicate records in import-results ------------------------------------------------


SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _line(answer: str, **extra) -> str:
    return json.dumps({"user": "maya", "query": "p1-open", "model": "m1", "answer": answer, **extra}) + "\n"


@pytest.fixture
def users_db(tmp_path):
    db = str(tmp_path / "u.db")
    cli(db, "import", str(SAMPLE / "users"))
    return db


def _imported_runs(db: str) -> int:
    return sum(1 for r in json.loads(cli(db, "runs", "--json")) if r["id"].startswith("run-imported-"))


def test_a_repeated_record_is_skipped_and_reported(users_db, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(
        _line("Try the market.") + _line("Try the park.") + _line("Try the market.") + _line("Try the park.")
    )
    result = invoke(users_db, "import-results", str(path))
    assert result.exit_code == 0, result.output
    assert "2 runs added" in result.output, result.output
    assert "skipped 2 duplicate records: a.jsonl line 3 repeats line 1; a.jsonl line 4 repeats line 2" in result.output
    assert _imported_runs(users_db) == 2
    again = invoke(users_db, "import-results", str(path))
    assert "2 already stored" in again.output and "skipped 2 duplicate records" in again.output
    assert _imported_runs(users_db) == 2


def test_keep_duplicates_stores_them_and_says_so(users_db, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(_line("Try the market.") + _line("Try the market."))
    result = invoke(users_db, "import-results", str(path), "--keep-duplicates")
    assert result.exit_code == 0, result.output
    assert "2 runs added" in result.output and "kept 1 duplicate record" in result.output, result.output
    assert _imported_runs(users_db) == 2


def test_records_differing_in_anything_but_position_are_not_duplicates(users_db, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(
        _line("Try the market.")
        + _line("Try the market.", model="m2")
        + _line("Try the market.", turns=2)
        + _line("Try the market.", meta={"seed": 1})
    )
    result = invoke(users_db, "import-results", str(path))
    assert result.exit_code == 0, result.output
    assert "4 runs added" in result.output and "duplicate" not in result.output, result.output


# --- (c) conflicting labels in annotate --import -------------------------------------------


def _responses(db: str) -> list[str]:
    import sqlite3

    with sqlite3.connect(db) as con:
        return [r for (r,) in con.execute("SELECT id FROM responses ORDER BY id")]


def _human_labels(db: str) -> int:
    import sqlite3

    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM judgments WHERE human = 1").fetchone()[0]


def test_one_annotator_labelling_one_answer_twice_differently_is_refused(users_db, tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text(_line("Try the market.") + _line("Try the park."))
    cli(users_db, "import-results", str(answers))
    r1, r2 = _responses(users_db)
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "response_id,annotator,dimension,score,note\n"
        f"{r1},alice,alignment,4,\n"
        f"{r2},alice,alignment,3,\n"
        f"{r1},bob,alignment,2,\n"
        f"{r1},alice,rubric:alignment,2,changed my mind\n"
    )
    result = invoke(users_db, "annotate", "--import", str(labels))
    assert result.exit_code == 1, result.output
    flat = " ".join(result.output.split())
    assert "nothing imported" in flat
    assert f"line 5: 'alice' labels rubric:alignment of '{r1}' 2, but line 2 labels it 4" in flat, flat
    assert _human_labels(users_db) == 0
    # the same label given twice, or the same answer by two annotators, is no conflict
    labels.write_text(
        "response_id,annotator,dimension,score,note\n"
        f"{r1},alice,alignment,4,\n"
        f"{r1},bob,alignment,2,\n"
        f"{r1},alice,alignment,4,\n"
    )
    assert invoke(users_db, "annotate", "--import", str(labels)).exit_code == 0


# --- (d) keymaps ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry,said",
    [
        ('quit = "junk"', "keymap.quit = 'junk': 'junk' is not a key"),
        ('run = "ctl+r"', "keymap.run = 'ctl+r': 'ctl' in 'ctl+r' is not a modifier"),
        ('"tab.promt" = "f2"', "keymap.tab.promt = 'f2': no binding 'tab.promt' (did you mean 'tab.prompt'?)"),
        ('quit = ""', "keymap.quit = '': no key"),
        ('run = "ctrl+q"', "keymap.run = 'ctrl+q': takes 'ctrl+q' from quit, which would have no key"),
    ],
)
def test_a_keymap_that_cannot_work_is_refused_naming_file_and_entry(tmp_path, entry, said):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[keymap]\n{entry}\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["--db", str(tmp_path / "k.db"), "--config", str(cfg), "users"], env={"COLUMNS": "500"}
    )
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert str(cfg) in lines[0] and said in lines[0], lines[0]
    assert "Traceback" not in result.output


def test_a_keymap_that_works_is_accepted(users_db, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[keymap]\nrun = "ctrl+r,f5"\nsearch = "question_mark"\nquit = "ctrl+w"\n"tab.prompt" = "1"\nhelp = "?"\n'
        'cancel_pane = "ctrl+q"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["--db", users_db, "--config", str(cfg), "users"])
    assert result.exit_code == 0, result.output
    assert "maya" in result.output


def test_the_known_binding_ids_are_the_tuis():
    """core cannot import the TUI, so it keeps the list: every Binding(id=…) of the TUI is in it."""
    import importlib
    import inspect
    import pkgutil

    from textual.binding import Binding

    import tui
    from core.settings import BINDING_IDS

    found = set()
    for info in pkgutil.walk_packages(tui.__path__, "tui."):
        if info.name.startswith("tui.cli"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                found |= {b.id for b in getattr(obj, "BINDINGS", None) or [] if isinstance(b, Binding) and b.id}
    assert found == set(BINDING_IDS)
