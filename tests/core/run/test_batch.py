"""`prefscope batch`: 200 demo cells complete; interrupted and resumed without duplicates;
failed cells only re-run with --retry-failed; the estimate; confirmation; Ctrl-C; no key stored."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter

import pytest
from click.testing import CliRunner

from app.batch import BatchSession
from app.batch import open_batch as open_session
from app.workbench import Workbench
from core.providers.base import ModelSpec
from core.run.batch import CellOutcome, Progress, select
from core.run.estimate import estimate_cells
from core.run.grid import Cell, Grid, GridError, cell_key, expand, load_grid
from core.run.prepare import prepare
from core.run.spec import ResponseFinished, RunSpec, TokensArrived
from core.settings import Settings
from storage.db import open_db
from storage.users import load_user
from tests.storage.export_fixtures import REPO, db_with_maya
from tests.waiting import wait_until
from tui.cli import main

#: 25 of maya's 32 queries × 4 expression types × 2 models = 200 cells.
QUERIES = [f"p{i}-{k}" for i in range(1, 7) for k in ("open", "mcq", "tf-yes", "tf-no")] + ["g1-open"]
MODELS = ["demo:generic", "demo:retrieval"]


def grid(name: str = "g200", **kw) -> Grid:
    data = dict(
        name=name,
        users=["maya"],
        queries=QUERIES,
        expression_types=[1, 2, 3, 4],
        contexts=["simple"],
        methods=["zero-shot"],
        models=MODELS,
        concurrency={"runs": 8, "per_provider": 4},
    )
    return Grid(**{**data, **kw})


def settings(db_path, pace: float = 0) -> Settings:
    return Settings(db=db_path, demo_tokens_per_s=pace)


def open_batch(db_path, g: Grid, s: Settings, **options) -> BatchSession:
    """A batch on its own workbench, as `prefscope batch` opens one."""
    return open_session(Workbench.open(s, db_path, sample_data=False), g, owns_workbench=True, **options)


def stored_runs(db_path, label: str) -> list[tuple[str, str, str]]:
    """(cell key recomputed from the stored spec, run status, run id) of every run of a batch."""
    db = open_db(db_path)
    try:
        rows = db.execute("SELECT spec, status, id FROM runs WHERE label = ?", [label]).fetchall()
    finally:
        db.close()
    return [(cell_key(RunSpec.model_validate_json(spec)), status, rid) for spec, status, rid in rows]


def cell_statuses(db_path, batch: str) -> Counter:
    db = open_db(db_path)
    try:
        return Counter(s for (s,) in db.execute("SELECT status FROM batch_cells WHERE batch = ?", [batch]))
    finally:
        db.close()


@pytest.fixture
def db_path(tmp_path):
    return db_with_maya(tmp_path / "batch.db")


async def test_200_demo_cells_complete(db_path):
    session = open_batch(db_path, grid(judges=["demo:heuristic"]), settings(db_path))
    try:
        assert len(session.cells) == 200
        progress = await session.run()
    finally:
        session.close()
    assert (progress.ok, progress.failed, progress.cancelled, progress.skipped) == (200, 0, 0, 0)
    assert progress.output_tokens > 0 and progress.cost_usd == 0.0 and progress.cost_text() == "$0.0000"
    runs = stored_runs(db_path, "g200")
    assert len(runs) == 200 and len({k for k, _, _ in runs}) == 200
    assert {k for k, _, _ in runs} == {c.key for c in session.cells}
    assert cell_statuses(db_path, "g200") == Counter(ok=200)
    db = open_db(db_path)
    judged = dict(db.execute("SELECT judge_model, count(DISTINCT run_id) FROM judgments GROUP BY judge_model"))
    db.close()
    # Judges ran inside the batch: heuristic rubric on open queries (7 × 4 × 2 = 56 runs), the
    # choice parser on MCQ/TF ones (18 × 4 × 2 = 144 runs).
    assert judged == {"demo:heuristic": 56, "parser:choice": 144}


async def test_interrupted_batch_resumes_without_duplicates(db_path):
    """Cancel the batch task after >= 60 cells; in-flight runs are stored as cancelled with their
    partial text; resuming runs only what is not done, and every cell ends with exactly one ok run."""
    session = open_batch(db_path, grid(), settings(db_path, pace=1000))
    reached = asyncio.Event()
    # Stop while an answer is mid-stream (not between cells, when claims are still being written):
    # after 60 cells, at a token of an answer that has not finished. Watching the cell runner's
    # events (its private downstream) is the only way to see a token before the answer is stored.
    streaming: set[str] = set()
    downstream = session.cell_runner._downstream

    def watch(event) -> None:
        if isinstance(event, TokensArrived) and event.text:
            streaming.add(event.response_id)
            if session.progress.done >= 60:
                reached.set()
        elif isinstance(event, ResponseFinished):
            streaming.discard(event.response_id)
        downstream(event)

    session.cell_runner._downstream = watch
    task = asyncio.create_task(session.run())
    await asyncio.wait_for(reached.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    first = session.progress
    session.close()
    # Runs still building their plan when stopped are handed back unstarted (not "cancelled"), so
    # on a slow machine every in-flight run may be one of those.
    assert first.stopped and 60 <= first.ok < 200

    statuses = cell_statuses(db_path, "g200")
    assert statuses["ok"] == first.ok and statuses["cancelled"] == first.cancelled
    assert "running" not in statuses
    db = open_db(db_path)
    cancelled_runs = db.execute("SELECT count(*) FROM runs WHERE label = 'g200' AND status = 'cancelled'").fetchone()[0]
    cancelled = db.execute(
        "SELECT p.status, p.text FROM responses p JOIN runs r ON r.id = p.run_id "
        "WHERE r.label = 'g200' AND r.status = 'cancelled'"
    ).fetchall()
    db.close()
    assert cancelled_runs == first.cancelled
    # A run stopped while still queued for a provider slot has no response yet; one stopped at the
    # instant its model finished keeps that answer as ok; the others were cut off mid-stream.
    assert len(cancelled) <= first.cancelled and {s for s, _ in cancelled} <= {"cancelled", "ok"}
    assert any(s == "cancelled" and text for s, text in cancelled), "partial text of cancelled runs is kept"

    resumed = open_batch(db_path, grid(), settings(db_path, pace=0))
    try:
        second = await resumed.run()
    finally:
        resumed.close()
    assert second.skipped == first.ok and second.ok == 200 - first.ok and second.failed == 0

    runs = stored_runs(db_path, "g200")
    ok_per_key = Counter(k for k, status, _ in runs if status == "ok")
    assert len(ok_per_key) == 200 and set(ok_per_key.values()) == {1}
    assert len(runs) == 200 + first.cancelled  # the only extra runs are the cancelled attempts
    assert cell_statuses(db_path, "g200") == Counter(ok=200)


async def test_failed_cells_rerun_only_with_retry_failed(db_path):
    g = grid("flaky", queries=["p1-open", "p2-open"], expression_types=[1], models=["demo:flaky", "demo:generic"])
    for retry, expect_runs in ((False, 4), (False, 4), (True, 6)):
        session = open_batch(db_path, g, settings(db_path), retry_failed=retry)
        try:
            p = await session.run()
        finally:
            session.close()
        assert len(stored_runs(db_path, "flaky")) == expect_runs
    assert p.skipped == 2 and p.failed == 2 and "demo:flaky" in p.errors[0]
    db = open_db(db_path)
    attempts = dict(db.execute("SELECT status, max(attempts) FROM batch_cells WHERE batch = 'flaky' GROUP BY status"))
    db.close()
    assert attempts == {"error": 2, "ok": 1}


def test_grid_expansion_keys_and_toml(tmp_path):
    toml = tmp_path / "fig5.toml"
    toml.write_text(
        'users = ["u"]\nexpression_types = [1, 2]\ncontexts = ["simple", "very-long"]\n'
        'methods = ["zero_shot", "zero-shot", "reminder"]\nseeds = [0]\n'
        'judges = ["demo:heuristic"]\n'
        '[[models]]\nid = "demo:generic"\n[[models]]\nid = "openai:gpt-4o-mini"\ntemperature = 0.0\n'
        "max_tokens = 256\n[concurrency]\nruns = 3\nper_provider = 2\n"
    )
    g = load_grid(toml)
    assert g.name == "fig5" and g.concurrency.runs == 3 and g.models[1].params.max_tokens == 256
    cells = expand(g, all_users=lambda: [], queries_of=lambda u: [("q1", "open"), ("q2", "mcq")])
    # 2 queries × 2 expressions × 2 contexts × 2 methods (aliases merged) × 2 models
    assert len(cells) == 32 and len({c.key for c in cells}) == 32
    assert {c.spec.method for c in cells} == {"zero-shot", "reminder"}
    assert {c.spec.context for c in cells} == {"simple", "very_long"}
    again = expand(
        g.model_copy(update={"name": "other"}),
        all_users=lambda: [],
        queries_of=lambda u: [("q1", "open"), ("q2", "mcq")],
    )
    assert [c.key for c in again] == [c.key for c in cells]  # the key ignores the batch name
    only_mcq = expand(
        g.model_copy(update={"query_kinds": ["mcq"]}),
        all_users=lambda: [],
        queries_of=lambda u: [("q1", "open"), ("q2", "mcq")],
    )
    assert {c.spec.query_id for c in only_mcq} == {"q2"}
    with pytest.raises(GridError, match="unknown method"):
        expand(g.model_copy(update={"methods": ["telepathy"]}), all_users=lambda: [], queries_of=lambda u: [])
    bad = tmp_path / "bad.toml"
    bad.write_text("users = [")
    with pytest.raises(GridError, match="not valid TOML"):
        load_grid(bad)


def test_select_skips_done_and_failed_unless_retry():
    cells = [Cell(k, None) for k in "abcdef"]  # type: ignore[arg-type]
    st = {"a": "ok", "b": "error", "c": "cancelled", "d": "running", "e": "partial"}
    run, skip = select(cells, st)
    assert [c.key for c in run] == ["c", "d", "f"] and [c.key for c in skip] == ["a", "b", "e"]
    run, _ = select(cells, st, retry_failed=True)
    assert [c.key for c in run] == ["b", "c", "d", "e", "f"]


async def test_estimate_sums_plan_tokens_and_reports_unknown_prices(db_path):
    db = open_db(db_path)
    bundle = load_user(db, "maya")
    db.close()
    g = grid("est", queries=["p1-open", "p1-mcq"], expression_types=[1, 4], models=["demo:generic", "x:unpriced"])
    cells = expand(g, all_users=lambda: ["maya"], queries_of=lambda u: [(q.id, q.kind) for q in bundle.queries])
    s = Settings(db=db_path)
    plans = {}

    async def plan_of(cell):
        key = cell.plan_key
        if key not in plans:
            spec = cell.spec.model_copy(update={"models": [ModelSpec(id="demo:generic")]})
            plans[key] = (await prepare(spec, bundle, [], s)).plan
        return plans[key]

    est = await estimate_cells(cells, plan_of, lambda m, usage, **kw: 0.0 if m.provider == "demo" else None)
    expected = sum([(await plan_of(c)).total_tokens for c in cells])
    assert est.cells == 8 and est.calls == 8 and len(plans) == 4
    assert est.input_tokens == expected
    assert est.output_tokens == 8 * 400
    assert est.unpriced_models == ["x:unpriced"] and est.unpriced_tokens == expected // 2 + 4 * 400
    assert est.cost_text() == "$0.0000 + n/a for x:unpriced"
    assert (await estimate_cells(cells[1:2], plan_of, lambda m, usage, **kw: None)).cost_text() == "n/a"


def test_cli_refuses_big_batches_without_yes_when_not_interactive(db_path, monkeypatch):
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    args = [
        "--db",
        str(db_path),
        "batch",
        "--name",
        "cli",
        "--user",
        "maya",
        "--query",
        "p1-open",
        "--query",
        "p1-mcq",
        "--model",
        "demo:generic",
        "--confirm-above-usd",
        "-1",
    ]
    refused = CliRunner().invoke(main, args, input="")
    assert refused.exit_code == 1 and "--yes" in refused.output
    assert stored_runs(db_path, "cli") == []
    done = CliRunner().invoke(main, [*args, "--yes"])
    assert done.exit_code == 0, done.output
    assert len(stored_runs(db_path, "cli")) == 2
    again = CliRunner().invoke(main, [*args, "--yes"])
    assert again.exit_code == 0 and "nothing to do" in again.output
    assert len(stored_runs(db_path, "cli")) == 2


@pytest.mark.slow
def test_ctrl_c_stops_cleanly(db_path):
    """SIGINT to a real `prefscope batch` process: exit 130, finished cells stored ok, in-flight
    ones cancelled (never left running), and the same command then finishes the rest."""
    env = {**os.environ, "PREFSCOPE_DEMO_TOKENS_PER_S": "400", "PYTHONUNBUFFERED": "1"}
    cmd = [
        sys.executable,
        "-m",
        "tui.cli",
        "--db",
        str(db_path),
        "batch",
        "--name",
        "sig",
        "--user",
        "maya",
        "--expression",
        "1",
        "--expression",
        "2",
        "--model",
        "demo:generic",
        "--runs",
        "4",
        "--yes",
    ]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wait_until(lambda: cell_statuses(db_path, "sig")["ok"] >= 5, timeout=60, every=0.1, what="5 cells done")
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out.decode(errors="replace")
    statuses = cell_statuses(db_path, "sig")
    assert statuses["ok"] >= 5 and statuses["cancelled"] >= 1 and "running" not in statuses
    assert sum(statuses.values()) < 64
    db = open_db(db_path)
    assert db.execute("SELECT count(*) FROM runs WHERE label = 'sig' AND status = 'running'").fetchone()[0] == 0
    db.close()
    env["PREFSCOPE_DEMO_TOKENS_PER_S"] = "0"
    subprocess.run(cmd, cwd=REPO, env=env, check=True, capture_output=True, timeout=120)
    assert cell_statuses(db_path, "sig") == Counter(ok=64)


async def test_no_api_key_in_db_or_exports(db_path, tmp_path, monkeypatch):
    """A real openai-protocol model (loopback server) runs with OPENAI_API_KEY set; the key must
    appear nowhere in the database file (WAL included) or in the CSV/JSONL exports."""
    from storage.export import export
    from tests.servers.openai_sse import serve
    from tests.servers.script import Reply

    key = "sk-test-PLANTEDkey0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with serve(Reply.text("Tea, as you like it.", usage=(50, 6))) as server:
        g = grid(
            "keys",
            queries=["p1-open", "p1-mcq"],
            expression_types=[1],
            models=[{"id": "openai:gpt-4o-mini", "base_url": server.base_url}],
        )
        session = open_batch(db_path, g, settings(db_path))
        try:
            p = await session.run()
        finally:
            session.close()
        assert p.ok == 2, p.errors
        assert all(r.auth == "bearer" for r in server.requests)  # the key really was used
    db = open_db(db_path)
    outputs = {}
    for fmt in ("csv", "jsonl"):
        for layout in ("wide", "long"):
            path = tmp_path / f"x-{layout}.{fmt}"
            with open(path, "w", encoding="utf-8", newline="") as fh:
                export(db, fh, fmt=fmt, layout=layout)
            outputs[path.name] = path.read_bytes()
    db.close()
    assert b"Tea, as you like it." in outputs["x-wide.csv"]
    blobs = {**outputs, **{p.name: p.read_bytes() for p in tmp_path.glob("batch.db*")}}
    assert "batch.db" in blobs
    for name, blob in blobs.items():
        assert key.encode() not in blob, name
        assert b"PLANTEDkey" not in blob, name


def test_progress_cost_text():
    p = Progress()
    p.unpriced = 2
    assert p.cost_text() == "n/a"
    p.priced, p.cost_usd = 1, 0.5
    assert p.cost_text() == "$0.5000 (+2 unpriced)"
    assert CellOutcome("ok").error is None
