"""RunFilter.probes=False leaves knowledge-probe runs out of every query built on run_where (reports,
compare sides), while the default keeps them, as before."""

from __future__ import annotations

import pytest

from storage.compare import side_for
from storage.db import open_db
from storage.export import RunFilter, run_where
from storage.report import load_judgments, load_responses
from tests.storage.stored_batches import batch, build_env, new_db, rows


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """One open case answered by demo:oracle with --probe: its MCQ / true-false probes are runs too."""
    root = tmp_path_factory.mktemp("probes")
    with build_env(root):
        path = new_db(root)
        batch(
            path, "pb", "--user", "maya", "--query", "p1-open", "--expression", "1", "--model", "demo:oracle", "--probe"
        )
    return path


def test_probe_runs_are_left_out_only_when_asked(db):
    all_runs = rows(db, "SELECT id, probe_of IS NOT NULL FROM runs")
    probes = {run for run, is_probe in all_runs if is_probe}
    answers = {run for run, is_probe in all_runs if not is_probe}
    assert probes and len(answers) == 1

    conn = open_db(db)
    try:
        for f, expected in ((RunFilter(), probes | answers), (RunFilter(probes=False), answers)):
            args: list = []
            where = run_where(f, args)
            assert {r for (r,) in conn.execute(f"SELECT r.id FROM runs r WHERE {where}", args)} == expected
        # The probes' choice scores are the only accuracy judgments: gone without the probe runs.
        assert len(load_judgments(conn, "choice", "accuracy", ["batch"], RunFilter())) == len(probes)
        assert load_judgments(conn, "choice", "accuracy", ["batch"], RunFilter(probes=False)) == []
        assert len(load_responses(conn, RunFilter(probes=False))) == 1
        assert len(load_responses(conn, RunFilter())) == 1 + len(probes)
        # A compare side never counts probe runs as answers.
        assert side_for(conn, "model=demo:oracle").filter.probes is False
    finally:
        conn.close()
