"""Position sweeps end to end on a real SQLite file: a 5-depth × 3-length batch of demo runs, the
stored plans' evidence at the requested depths, and the heatmap in the terminal and as PNG, its
numbers read back from the stored judgments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from storage.db import open_db
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)
from tui.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"
DEPTHS = ("0", "0.25", "0.5", "0.75", "1")
CONTEXTS = ("simple", "normal", "long")


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    path = str(tmp_path_factory.mktemp("sweep") / "s.db")
    cli(path, "import", str(SAMPLE / "users"))
    cli(path, "import", str(SAMPLE / "filler"))
    args = [
        "batch",
        "--name",
        "depth",
        "--user",
        "maya",
        "--query",
        "p1-open",
        "--query",
        "p2-open",
        "--expression",
        "1",
    ]
    args += [a for c in CONTEXTS for a in ("--context", c)] + [a for d in DEPTHS for a in ("--evidence-depth", d)]
    cli(path, *args, "--model", "demo:forgetful", "--judge", "demo:heuristic", "--yes")
    yield path
    mp.undo()


def stored(db: str, sql: str, args=()) -> list[tuple]:
    conn = open_db(db)
    try:
        return conn.execute(sql, list(args)).fetchall()
    finally:
        conn.close()


def test_every_cell_of_the_sweep_is_stored_once(swept):
    rows = stored(swept, "SELECT json_extract(spec, '$.evidence_depth'), context, status FROM runs WHERE label='depth'")
    assert len(rows) == len(DEPTHS) * len(CONTEXTS) * 2
    assert {(d, c) for d, c, _ in rows} == {(float(d), c) for d in DEPTHS for c in CONTEXTS}
    assert {s for *_, s in rows} == {"ok"}


def test_stored_plans_put_the_evidence_at_the_requested_depth(swept):
    for spec_json, plan_json in stored(swept, "SELECT spec, plan FROM runs WHERE label='depth'"):
        depth = json.loads(spec_json)["evidence_depth"]
        plan = json.loads(plan_json)
        (evidence,) = plan["evidence"]
        sessions = plan["context"]
        gold = sessions[evidence["position"]]
        assert gold["session_id"] == evidence["session_id"]
        others = plan["history_tokens"] - gold["tokens"]
        after = sum(s["tokens"] for s in sessions[evidence["position"] + 1 :])
        assert after == evidence["tokens_to_query"]
        before = others - after
        # the nearest whole-session boundary: off by at most half the largest neighbouring session
        widest = max(s["tokens"] for i, s in enumerate(sessions) if i != evidence["position"])
        assert abs(before - depth * others) <= widest / 2 + 1
        if depth == 1:
            assert evidence["tokens_to_query"] == 0
        if depth == 0:
            assert evidence["position"] == 0
        assert any(f"evidence depth {depth:g} (reached" in n for n in plan["notes"])


def test_the_same_seed_keeps_the_same_filler_at_every_depth(swept):
    orders = {}
    for spec_json, plan_json in stored(
        swept, "SELECT spec, plan FROM runs WHERE label='depth' AND context='normal' AND query_id='p1-open'"
    ):
        plan = json.loads(plan_json)
        gold = plan["evidence"][0]["session_id"]
        orders[json.loads(spec_json)["evidence_depth"]] = [
            s["session_id"] for s in plan["context"] if s["session_id"] != gold
        ]
    assert len(orders) == len(DEPTHS)
    assert len({tuple(o) for o in orders.values()}) == 1


def test_heatmap_prints_the_stored_means(swept):
    out = CliRunner().invoke(
        main, ["--db", swept, "report", "--batch", "depth", "--by", "evidence_depth,context", "--heatmap"],
        terminal_width=140, catch_exceptions=False,
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    means = stored(
        swept,
        "SELECT json_extract(r.spec, '$.evidence_depth'), r.context, avg(j.score), count(*) FROM runs r "
        "JOIN judgments j ON j.run_id = r.id WHERE r.label='depth' AND j.dimension='alignment' GROUP BY 1, 2",
    )
    lines = {line.split()[0]: line for line in out.output.splitlines() if line.strip()[:1].isdigit()}
    for depth, context, mean, n in means:
        row = lines[f"{depth:g}"].split()
        column = 1 + 2 * CONTEXTS.index(context)
        assert row[column : column + 2] == [f"{mean:.2f}", f"n={n}"]
    # the forgetful demo model loses evidence far from the question in the longest history
    by_cell = {(d, c): m for d, c, m, _ in means}
    assert by_cell[(1.0, "long")] > by_cell[(0.0, "long")]


def test_heatmap_png_is_written_and_refused_over_an_existing_file(swept, tmp_path):
    png = tmp_path / "heat.png"
    cli(swept, "report", "--batch", "depth", "--by", "evidence_depth,context", "--heatmap", "--png", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = CliRunner().invoke(
        main,
        ["--db", swept, "report", "--batch", "depth", "--by", "evidence_depth,context", "--heatmap", "--png", str(png)],
    )
    assert again.exit_code == 1 and "--force" in again.output


def test_heatmap_needs_two_factors(swept):
    out = CliRunner().invoke(main, ["--db", swept, "report", "--batch", "depth", "--by", "context", "--heatmap"])
    assert out.exit_code == 1
    assert "two factors" in out.output


def test_depth_figure_draws_lines(swept, tmp_path):
    png = tmp_path / "lines.png"
    out = cli(swept, "report", "--batch", "depth", "--figure", "depth", "--png", str(png), "--no-chart")
    assert "evidence_depth" in out and png.read_bytes()[:4] == b"\x89PNG"


def test_a_depth_outside_0_to_1_is_a_usage_error(swept):
    out = CliRunner().invoke(main, ["--db", swept, "prompt", "maya", "p1-open", "--evidence-depth", "1.5"])
    assert out.exit_code == 2
    assert "0<=x<=1" in out.output


def test_prompt_shows_the_depth_the_batch_stored(swept):
    out = CliRunner().invoke(
        main,
        ["--db", swept, "prompt", "maya", "p1-open", "-e", "1", "-c", "long", "--evidence-depth", "0.5", "--json"],
        catch_exceptions=False,
    )
    plan = json.loads(out.stdout)["plan"]
    (row,) = stored(
        swept,
        "SELECT plan FROM runs WHERE label='depth' AND context='long' AND query_id='p1-open' "
        "AND json_extract(spec, '$.evidence_depth') = 0.5",
    )
    assert json.loads(row[0])["evidence"] == plan["evidence"]
