"""`prefscope run` end to end on the sample data: it stores the run, replays it offline from the
response cache, and refuses bad input with one clear line."""

from __future__ import annotations

from click.testing import CliRunner

from storage.db import open_db
from storage.runs import list_runs, load_run
from tui.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_stores_then_replay_reproduces_the_answer(tmp_path):
    db = str(tmp_path / "r.db")
    first = run("--db", db, "run", "maya", "p3-open", "--model", "demo:retrieval", "--plain")
    assert first.exit_code == 0, first.output
    again = run("--db", db, "run", "maya", "p3-open", "--model", "demo:retrieval", "--replay", "--plain")
    assert again.exit_code == 0, again.output
    conn = open_db(db)
    newest, oldest = list_runs(conn)
    original = load_run(conn, oldest.id).final_responses()[0]
    replayed = load_run(conn, newest.id).final_responses()[0]
    assert newest.models == ["replay:demo:retrieval"]
    assert replayed.status == "ok" and replayed.cache_hit and replayed.cost_usd == 0.0
    assert replayed.text == original.text and original.text
    # Judges ran on both (the default judge is demo:heuristic) and were stored.
    assert load_run(conn, newest.id).judgments


def test_replay_without_a_recording_says_how_to_make_one(tmp_path):
    result = run(
        "--db", str(tmp_path / "r.db"), "run", "maya", "p3-open", "--model", "demo:oracle", "--replay", "--plain"
    )
    assert result.exit_code == 1 and "every model failed" in result.output  # the only model failed
    conn = open_db(str(tmp_path / "r.db"))
    (resp,) = load_run(conn, list_runs(conn)[0].id).final_responses()
    assert resp.status == "error" and "Record one by running the same prompt" in resp.error


def test_unknown_user_query_and_model_fail_with_one_line(tmp_path):
    db = str(tmp_path / "r.db")
    r = CliRunner().invoke(main, ["--db", db, "run", "nobody", "p1-open"])
    assert r.exit_code == 1 and "user 'nobody' not found" in r.output
    r = CliRunner().invoke(main, ["--db", db, "run", "maya", "p99-open"])
    assert r.exit_code == 1 and "p99-open" in r.output
    r = CliRunner().invoke(main, ["--db", db, "run", "maya", "p1-open", "--model", "gpt4"])
    assert r.exit_code == 1 and "provider:model" in r.output
    r = CliRunner().invoke(main, ["--db", db, "run", "maya", "p1-open", "--method", "magic"])
    assert r.exit_code == 1 and "unknown method" in r.output


def test_prompt_sends_nothing_and_lists_the_summaries_a_run_would_write(tmp_path):
    db = str(tmp_path / "r.db")
    r = run("--db", db, "prompt", "dana", "q-changing-1", "--context", "summaries", "--method", "cupid-generate")
    assert r.exit_code == 0, r.output
    assert "pending:" in r.output and "session summaries" in r.output
    conn = open_db(db)
    assert conn.execute("SELECT count(*) FROM summaries").fetchone() == (0,)
    assert list_runs(conn) == []


def test_relevance_llm_decider_goes_through_the_workbench(tmp_path, monkeypatch):
    """`relevance --model` adds the LLM's decisions next to the offline ones (demo:extractor is the
    offline analyst model), through the one decide_relevance the TUI uses too."""
    from storage.analyses import load_relevance

    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    db = str(tmp_path / "r.db")
    args = ("maya", "p3-open", "--method", "rag", "--retriever", "bm25", "--model", "demo:generic", "--plain")
    assert run("--db", db, "run", *args).exit_code == 0
    conn = open_db(db)
    run_id = list_runs(conn)[0].id
    r = CliRunner().invoke(
        main, ["--db", db, "relevance", run_id, "--no-embedding", "--model", "demo:extractor"], env={"COLUMNS": "200"}
    )
    assert r.exit_code == 0, r.output
    decisions = [s.decision for s in load_relevance(conn, run_id)]
    assert {d.decider for d in decisions} == {"gold", "bm25", "llm"}
    assert any(d.relevant is not None for d in decisions if d.decider == "llm"), "the LLM answered"
    r = CliRunner().invoke(main, ["--db", db, "relevance", run_id, "--attributes", "x-nope", "--recompute"])
    assert r.exit_code == 1 and "x-nope" in r.output


def test_embedding_relevance_decisions_name_the_embedder(tmp_path, monkeypatch):
    from storage.analyses import load_relevance

    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    db = str(tmp_path / "r.db")
    args = ("maya", "p3-open", "--method", "rag", "--model", "demo:generic", "--plain")
    assert run("--db", db, "run", *args).exit_code == 0
    conn = open_db(db)
    run_id = list_runs(conn)[0].id
    assert CliRunner().invoke(main, ["--db", db, "relevance", run_id]).exit_code == 0
    decisions = [s.decision for s in load_relevance(conn, run_id) if s.decision.decider == "embedding"]
    assert decisions and {d.model for d in decisions} == {"all-MiniLM-L6-v2@onnx-fp32"}
    ranked = conn.execute("SELECT DISTINCT retrieved_by FROM retrievals WHERE run_id = ?", [run_id]).fetchall()
    assert ranked == [("all-MiniLM-L6-v2@onnx-fp32",)]
