"""`prefscope agreement` on a real SQLite file: a demo batch judged by the heuristic, an answer
queue built by `prefscope annotate`, and two annotators' labels imported from a CSV this test
writes. The CSV's statistics equal sklearn's, scipy's and krippendorff's on those same labels.

The batch: maya, open queries, expressions 1 and 2, normal context, three demo models (48 answers);
the queue: 30 of them. alice scores all 30 on alignment and awareness, bob 27 on alignment."""

from __future__ import annotations

import math
import random
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score

from tests.cli_runner import cli
from tests.conftest import SAMPLE_DATA
from tests.storage.annotation_fixtures import building_b1, copy_db, write_csv
from tests.storage.stored_batches import rows
from tui.cli import main

COLUMNS = ["rater_a", "rater_b", "dimension", "n", "exact", "within1", "cohen_kappa"]
COLUMNS += ["weighted_kappa_linear", "weighted_kappa_quadratic", "spearman", "kendall"]
LABELS = [1, 2, 3, 4, 5]
PNG = b"\x89PNG\r\n\x1a\n"


def noisy(score: float, rng: random.Random) -> int:
    """A human's score near the judge's: the same, one off, or anything."""
    roll = rng.random()
    if roll < 0.5:
        return int(score)
    if roll < 0.85:
        return int(min(5, max(1, score + rng.choice((-1, 1)))))
    return rng.randint(1, 5)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    """db: batch + queue Q + imported labels; unlabelled: the same before the import; labels: what was written."""
    with building_b1(tmp_path_factory, "agreement-cli") as path:
        cli(path, "annotate", "Q", "--batch", "b1", "--sample", "30", "--seed", "5", "--no-open")
        unlabelled = copy_db(path, Path(path).with_name("unlabelled.db"))
        queue = [
            r for (r,) in rows(path, "SELECT response_id FROM annotation_items WHERE queue = 'Q' ORDER BY position")
        ]
        heuristic = {
            (rid, dim): score
            for rid, dim, score in rows(
                path, "SELECT response_id, dimension, score FROM judgments WHERE judge_model = 'demo:heuristic'"
            )
        }
        rng = random.Random(20)
        labels: dict[tuple[str, str], dict[str, int]] = {("alice", "alignment"): {}, ("alice", "awareness"): {}}
        labels[("bob", "alignment")] = {}
        lines = ["response_id,annotator,dimension,score"]
        for i, rid in enumerate(queue):
            for who, dim in (("alice", "alignment"), ("alice", "awareness"), ("bob", "alignment")):
                if who == "bob" and i % 10 == 3:
                    continue  # bob leaves three answers unlabelled
                score = noisy(heuristic[(rid, dim)], rng)
                labels[(who, dim)][rid] = score
                lines.append(f"{rid},{who},{dim if who == 'alice' else 'rubric:' + dim},{score}")
        # an answer outside the queue, labelled too: --queue leaves it out
        outside = next(r for (r,) in rows(path, "SELECT id FROM responses ORDER BY id") if r not in queue)
        lines.append(f"{outside},alice,alignment,1")
        csv_path = write_csv(Path(path).with_name("labels.csv"), lines)
        out = cli(path, "annotate", "--import", str(csv_path))
        assert "imported 88 labels by alice, bob" in " ".join(out.split())
    for dim in ("alignment", "awareness"):
        labels[("demo:heuristic", dim)] = {rid: heuristic[(rid, dim)] for rid in queue}
    return {"db": path, "unlabelled": unlabelled, "labels": labels, "queue": queue}


def expected_pair(a: dict, b: dict) -> dict:
    both = [k for k in a if k in b]
    xs, ys = [a[k] for k in both], [b[k] for k in both]
    return {
        "n": len(both),
        "exact": np.mean([x == y for x, y in zip(xs, ys)]),
        "within1": np.mean([abs(x - y) <= 1 for x, y in zip(xs, ys)]),
        "cohen_kappa": cohen_kappa_score(xs, ys, labels=LABELS),
        "weighted_kappa_linear": cohen_kappa_score(xs, ys, weights="linear", labels=LABELS),
        "weighted_kappa_quadratic": cohen_kappa_score(xs, ys, weights="quadratic", labels=LABELS),
        "spearman": spearmanr(xs, ys).statistic,
        "kendall": kendalltau(xs, ys).statistic,
    }


def alpha(raters: list[dict], items: list[str]) -> float:
    matrix = np.array([[r.get(i, np.nan) for i in items] for r in raters], dtype=float)
    return krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=LABELS)


def test_the_csv_has_one_row_per_rater_pair_with_sklearn_scipy_and_krippendorff_values(world, tmp_path):
    out_csv = tmp_path / "out.csv"
    out = cli(world["db"], "agreement", "--queue", "Q", "--csv", str(out_csv))
    assert f"4 rows → {out_csv}" in " ".join(out.split())
    df = pd.read_csv(out_csv)
    assert list(df.columns[: len(COLUMNS)]) == COLUMNS
    labels = world["labels"]
    expected_rows = [("rubric:alignment", a, b) for a, b in combinations(["alice", "bob", "demo:heuristic"], 2)] + [
        ("rubric:awareness", "alice", "demo:heuristic")
    ]
    assert [(r.dimension, r.rater_a, r.rater_b) for r in df.itertuples()] == expected_rows
    for r in df.itertuples():
        dim = r.dimension.split(":")[1]
        want = expected_pair(labels[(r.rater_a, dim)], labels[(r.rater_b, dim)])
        for column, value in want.items():
            assert getattr(r, column) == pytest.approx(value), (r.rater_a, r.rater_b, column)
        raters = ["alice", "bob", "demo:heuristic"] if dim == "alignment" else ["alice", "demo:heuristic"]
        assert r.raters == len(raters) and (r.abstained_a, r.abstained_b) == (0, 0)
        assert r.krippendorff_alpha == pytest.approx(alpha([labels[(x, dim)] for x in raters], world["queue"]))
    assert list(df.n) == [27, 30, 27, 30]


def test_without_the_queue_every_labelled_answer_counts(world, tmp_path):
    out_csv = tmp_path / "all.csv"
    cli(world["db"], "agreement", "--batch", "b1", "--dimension", "rubric:alignment", "--csv", str(out_csv))
    df = pd.read_csv(out_csv)
    assert set(df.dimension) == {"rubric:alignment"}
    n = {(r.rater_a, r.rater_b): r.n for r in df.itertuples()}
    assert n == {("alice", "bob"): 27, ("alice", "demo:heuristic"): 31, ("bob", "demo:heuristic"): 27}


def test_the_table_names_each_dimension_and_its_raters(world):
    out = " ".join(cli(world["db"], "agreement", "--queue", "Q").split())
    assert "rubric:alignment (ordinal) · α =" in out and "over 3 raters · 30 items" in out
    assert "rubric:awareness (ordinal)" in out and "over 2 raters · 30 items" in out
    assert "rubric:quality: only demo:heuristic rated it (nothing to compare)" in out


def test_png_writes_a_confusion_matrix_figure_per_dimension(world, tmp_path):
    folder = tmp_path / "figs"
    out = cli(world["db"], "agreement", "--queue", "Q", "--png", str(folder))
    written = sorted(p.name for p in folder.iterdir())
    assert written == ["confusion-rubric-alignment.png", "confusion-rubric-awareness.png"]
    for name in written:
        assert (folder / name).read_bytes()[:8] == PNG
        assert f"confusionmatrices→{folder / name}" in "".join(out.split())  # the path may wrap


def test_png_over_an_existing_figure_needs_force(world, tmp_path):
    folder = tmp_path / "figs"
    cli(world["db"], "agreement", "--queue", "Q", "--png", str(folder))
    result = CliRunner().invoke(main, ["--db", world["db"], "agreement", "--queue", "Q", "--png", str(folder)])
    assert result.exit_code == 1 and "--force" in result.output


def test_png_with_force_replaces_the_figures(world, tmp_path):
    folder = tmp_path / "figs"
    cli(world["db"], "agreement", "--queue", "Q", "--png", str(folder))
    figure = folder / "confusion-rubric-alignment.png"
    figure.write_bytes(b"old")
    cli(world["db"], "agreement", "--queue", "Q", "--png", str(folder), "--force")
    assert figure.read_bytes()[:8] == PNG


def test_a_csv_over_an_existing_file_needs_force(world, tmp_path):
    out_csv = tmp_path / "out.csv"
    out_csv.write_text("keep me\n")
    result = CliRunner().invoke(main, ["--db", world["db"], "agreement", "--queue", "Q", "--csv", str(out_csv)])
    assert result.exit_code == 1 and "--force" in result.output
    assert out_csv.read_text() == "keep me\n"
    cli(world["db"], "agreement", "--queue", "Q", "--csv", str(out_csv), "--force")
    assert list(pd.read_csv(out_csv).columns[: len(COLUMNS)]) == COLUMNS


def test_the_csv_is_never_written_onto_the_database(world):
    result = CliRunner().invoke(main, ["--db", world["db"], "agreement", "--csv", world["db"], "--force"])
    assert result.exit_code == 1 and "database" in result.output
    assert rows(world["db"], "SELECT count(*) FROM judgments WHERE human = 1") == [(88,)]


def test_without_human_labels_agreement_says_only_the_judge_rated(world, tmp_path):
    out_csv = tmp_path / "none.csv"
    out = " ".join(cli(world["unlabelled"], "agreement", "--batch", "b1", "--csv", str(out_csv)).split())
    for dim in ("rubric:alignment", "rubric:awareness", "rubric:quality"):
        assert f"{dim}: only demo:heuristic rated it (nothing to compare)" in out
    assert "0 rows" in out
    assert pd.read_csv(out_csv).empty


def test_a_database_with_no_ratings_says_so_and_exits_0(tmp_path):
    db = str(tmp_path / "empty.db")
    cli(db, "import", str(SAMPLE_DATA / "users"))
    out = " ".join(cli(db, "agreement").split())
    assert "nothing rated by two raters here; label a queue first" in out


def test_an_unknown_queue_is_named(world):
    result = CliRunner().invoke(main, ["--db", world["db"], "agreement", "--queue", "nope"])
    assert result.exit_code == 1 and "no annotation queue 'nope'" in result.output


def test_alpha_is_defined_here(world):
    """Guard for the comparison above: the labels vary enough for every statistic to exist."""
    labels = world["labels"]
    for key in (("alice", "alignment"), ("bob", "alignment"), ("alice", "awareness")):
        assert len(set(labels[key].values())) >= 3, key
    assert not math.isnan(alpha([labels[("alice", "alignment")], labels[("bob", "alignment")]], world["queue"]))
