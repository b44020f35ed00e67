"""`prefscope annotate` on a real demo batch in a real SQLite file: building queues, their status,
the list of queues and the CSV import (the labelling screen itself is not opened here).

The batch: maya, open queries, expressions 1 and 2, normal context, three demo models judged by
the heuristic: 16 prompts × 3 models = 48 answers."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from storage.annotation_labels import Label, save_label, skip_item
from storage.annotation_queues import load_item, queue, serving_order
from storage.db import open_db
from tests.cli_runner import cli
from tests.storage.annotation_fixtures import fixture_built, fixture_db_file, response_ids, write_csv  # noqa: F401 (fixtures)
from tests.storage.stored_batches import rows
from tui.cli import main


def failing(db: str, *args: str):
    result = CliRunner().invoke(main, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return " ".join(result.output.split())


def flat(text: str) -> str:
    return " ".join(text.split())


def table_rows(output: str) -> list[list[str]]:
    """The cells of a rich table's body rows (lines framed by │)."""
    return [[c.strip() for c in line.strip().strip("│").split("│")] for line in output.splitlines() if "│" in line]


def test_a_sampled_queue_is_built_and_its_status_shows_30_items(db):
    out = cli(db, "annotate", "Q", "--batch", "b1", "--sample", "30", "--no-open")
    assert "queue Q: 30 answer items, blind" in out
    assert rows(db, "SELECT count(*), count(DISTINCT response_id) FROM annotation_items WHERE queue = 'Q'") == [
        (30, 30)
    ]
    status = cli(db, "annotate", "Q", "--status")
    assert table_rows(status) == [["Q", "answer", "30", "yes", "—", "0", "0", ""]]
    assert "prefscope annotate QUEUE --annotator NAME" in status


def test_status_shows_each_annotators_progress(db):
    cli(db, "annotate", "Q", "--batch", "b1", "--sample", "30", "--seed", "4", "--no-open")
    conn = open_db(db)
    try:
        q = queue(conn, "Q")
        first, second, third = serving_order(q, "alice")[:3]
        save_label(conn, load_item(conn, "Q", first), "alice", Label(scores={"alignment": 4}), blind=True)
        save_label(conn, load_item(conn, "Q", second), "alice", Label(scores={"quality": 2}), blind=True)
        skip_item(conn, load_item(conn, "Q", third), "alice")
        skip_item(conn, load_item(conn, "Q", third), "bob")
    finally:
        conn.close()
    assert table_rows(cli(db, "annotate", "Q", "--status")) == [
        ["Q", "answer", "30", "yes", "alice", "2", "1", "27"],
        ["Q", "answer", "30", "yes", "bob", "0", "1", "29"],
    ]


def test_without_a_queue_name_annotate_lists_the_queues(db):
    assert "no annotation queues yet" in cli(db, "annotate")
    cli(db, "annotate", "Q", "--batch", "b1", "--sample", "30", "--no-open")
    out = cli(db, "annotate", "P", "--batch", "b1", "--kind", "pair", "--not-blind", "--no-open")
    assert "queue P: 48 pair items, not blind" in out
    cli(db, "annotate", "O", "--batch", "b1", "--where", "model=demo:oracle", "--no-open")
    assert table_rows(cli(db, "annotate")) == [
        ["O", "answer", "16", "yes", "—", "0", "0", ""],
        ["P", "pair", "48", "no", "—", "0", "0", ""],
        ["Q", "answer", "30", "yes", "—", "0", "0", ""],
    ]


def test_building_with_status_prints_the_new_queue(db):
    out = cli(db, "annotate", "D", "--batch", "b1", "--sample", "5", "--status")
    assert "queue D: 5 answer items, blind" in out
    assert table_rows(out) == [["D", "answer", "5", "yes", "—", "0", "0", ""]]


def test_the_same_seed_builds_the_same_queue(db):
    cli(db, "annotate", "A", "--batch", "b1", "--sample", "10", "--seed", "11", "--no-open")
    cli(db, "annotate", "B", "--batch", "b1", "--sample", "10", "--seed", "11", "--no-open")
    cli(db, "annotate", "C", "--batch", "b1", "--sample", "10", "--seed", "12", "--no-open")
    items = {
        q: rows(db, "SELECT response_id FROM annotation_items WHERE queue = ? ORDER BY position", q) for q in "ABC"
    }
    assert items["A"] == items["B"] != items["C"]


def test_an_existing_queue_is_not_rebuilt(db):
    cli(db, "annotate", "Q", "--batch", "b1", "--sample", "30", "--no-open")
    out = failing(db, "annotate", "Q", "--batch", "b1", "--sample", "5", "--no-open")
    assert "queue 'Q' exists already" in out and "'sample': 30" in out
    assert rows(db, "SELECT count(*) FROM annotation_items WHERE queue = 'Q'") == [(30,)]


def test_an_unknown_queue_without_a_filter_is_refused(db):
    out = failing(db, "annotate", "nope", "--status")
    assert "no annotation queue 'nope'" in out and "--batch B" in out


def test_a_filter_that_selects_nothing_is_refused_naming_it(db):
    out = failing(db, "annotate", "Z", "--batch", "b1", "--where", "model=demo:nobody", "--no-open")
    assert "selects nothing" in out and "model=demo:nobody" in out
    out = failing(db, "annotate", "Z", "--batch", "b1", "--where", "colour=red", "--no-open")
    assert "unknown factor 'colour'" in out
    assert rows(db, "SELECT count(*) FROM annotation_queues") == [(0,)]


def test_an_unusable_annotator_is_refused_before_the_workbench_opens(db):
    cli(db, "annotate", "Q", "--batch", "b1", "--sample", "3", "--no-open")
    out = failing(db, "annotate", "Q", "--annotator", "a b")
    assert "annotator 'a b'" in out and "letters, digits" in out


def write_labels(path: Path, db: str, n: int) -> Path:
    ids = [rid for rid, _ in response_ids(db, n)]
    lines = ["response_id,annotator,dimension,score,note"]
    lines += [f'{rid},alice,alignment,{1 + i % 5},"a note, with a comma"' for i, rid in enumerate(ids)]
    lines += [f"{rid},bob,rubric:awareness,{5 - i % 5}," for i, rid in enumerate(ids)]
    return write_csv(path, lines)


def test_import_stores_every_row_and_names_the_annotators(db, tmp_path):
    labels = write_labels(tmp_path / "labels.csv", db, 6)
    # wide enough for the whole path on one line, however deep the machine's temp folder is
    result = CliRunner().invoke(main, ["--db", db, "annotate", "--import", str(labels)], env={"COLUMNS": "500"})
    assert result.exit_code == 0, result.output
    assert f"imported 12 labels by alice, bob from {labels}" in flat(result.output)
    stored = rows(
        db, "SELECT judge_model, dimension, count(*), min(rationale) FROM judgments WHERE human = 1 GROUP BY 1, 2"
    )
    assert stored == [("human:alice", "alignment", 6, "a note, with a comma"), ("human:bob", "awareness", 6, "")]


def test_a_bad_import_stores_nothing_and_names_the_line(db, tmp_path):
    labels = write_labels(tmp_path / "labels.csv", db, 4)
    text = labels.read_text().splitlines()
    text[3] = text[3].replace(",alignment,3,", ",alignment,7,")
    text.append("resp-nope,bob,alignment,2,")
    labels.write_text("\n".join(text) + "\n")
    before = rows(db, "SELECT count(*) FROM judgments")
    out = failing(db, "annotate", "--import", str(labels))
    assert "nothing imported" in out
    assert "line 4: score 7 is outside the 1–5 scale of rubric:alignment" in out
    assert "line 10: no answer with response_id 'resp-nope'" in out
    assert rows(db, "SELECT count(*) FROM judgments") == before


def test_import_of_a_missing_file_is_a_usage_error(db, tmp_path):
    result = CliRunner().invoke(main, ["--db", db, "annotate", "--import", str(tmp_path / "none.csv")])
    assert result.exit_code == 2 and "does not exist" in result.output
