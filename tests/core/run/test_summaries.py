"""CUPID's summaries setting end to end: each session is summarised once by a model through the
provider layer, the summaries are cached in SQLite and reused, and the prompt carries them."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner

from core.formats.native import load_file
from core.providers.base import ModelSpec
from core.run.prepare import prepare
from core.run.spec import RunSpec
from core.settings import Settings
from storage.db import open_db
from storage.runs import list_runs, load_run
from storage.summaries import SqliteSummaryCache
from tests.conftest import SAMPLE_DATA
from tui.cli import main


def test_run_with_summaries_caches_them(tmp_path):
    db_path = str(tmp_path / "s.db")
    args = [
        "--db",
        db_path,
        "run",
        "dana",
        "q-changing-1",
        "--context",
        "summaries",
        "--method",
        "cupid-generate",
        "--model",
        "demo:generic",
        "--plain",
    ]
    first = CliRunner().invoke(main, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    db = open_db(db_path)
    sessions = len(load_file(SAMPLE_DATA / "users" / "dana.json").bundles[0].sessions)
    assert db.execute("SELECT count(*), count(DISTINCT model) FROM summaries").fetchone() == (sessions, 1)
    stamp = db.execute("SELECT max(created_at) FROM summaries").fetchone()[0]
    second = CliRunner().invoke(main, args, catch_exceptions=False)
    assert second.exit_code == 0
    assert db.execute("SELECT count(*), max(created_at) FROM summaries").fetchone() == (sessions, stamp)
    run = load_run(db, list_runs(db)[0].id)
    prompt = run.plan.steps[0].messages[-1].content
    summary = db.execute("SELECT summary FROM summaries LIMIT 1").fetchone()[0]
    assert summary.strip()[:40] in prompt, "the prompt shows the stored summaries, not the sessions"


def test_summaries_work_from_inside_a_running_loop(tmp_path):
    """Batch prepares plans inside its event loop; the summariser must not need a free loop."""
    bundle = load_file(SAMPLE_DATA / "users" / "dana.json").bundles[0]
    spec = RunSpec(
        user_id="dana",
        query_id="q-changing-1",
        context="summaries",
        method="cupid-generate",
        models=[ModelSpec(id="demo:generic")],
    )
    cache = SqliteSummaryCache(open_db(tmp_path / "l.db"))

    async def inside_a_loop():
        return (await prepare(spec, bundle, [], Settings(demo_tokens_per_s=0), summary_cache=cache)).plan

    plan = asyncio.run(inside_a_loop())
    assert plan.history_tokens > 0 and "#### Summary" in plan.steps[0].messages[-1].content
