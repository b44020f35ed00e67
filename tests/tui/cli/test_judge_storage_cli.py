"""Analyses storage round trips, and the `judge` / `relevance` / `attributes` commands on a run
recorded through the real RunRecorder."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from core.analysis.attributes import Candidate, ChunkOutput, ExtractedAttribute, Extraction
from core.analysis.relevance import Decision
from core.model import Attribute
from core.plan import RetrievedTurn
from storage import analyses
from storage.db import open_db
from storage.runs import load_run
from tests.core.judges.recorded_run import record_run
from tests.core.judges.test_heuristic import ALIGNED, VIOLATING
from tui.cli import main


def _extraction(user_id: str) -> Extraction:
    attrs = [
        ExtractedAttribute(
            Attribute(
                id="x1",
                text="The user wants live calls.",
                reasoning="said so",
                confidence=0.85,
                evidence_turns=["priya-p1-e1#0"],
                source="openai:gpt-4o",
            ),
            merged_from=["The user likes calls."],
            chunks=[0, 1],
            verifier_verdict="accept",
            verifier_reason="supported",
            verifier_raw='{"verdict": "accept"}',
        )
    ]
    return Extraction(
        user_id,
        "openai:gpt-4o",
        "recentering-extract-v1",
        0.0,
        50_000,
        0.4,
        0.7,
        attrs,
        [Candidate("The user is a pilot.", "weak", 0.2, [], 1)],
        [ChunkOutput(0, '{"attributes": []}', None, 1), ChunkOutput(1, "garbage", "no JSON", 0, ["n"])],
        "anthropic:claude-sonnet-4-5",
        "recentering-verify-v1",
    )


def test_extraction_round_trip_and_operator_verdict(tmp_path, priya):
    db = open_db(tmp_path / "a.db")
    ex = _extraction("priya")
    xid = analyses.save_extraction(db, ex, embedding_model="all-MiniLM-L6-v2")
    back = analyses.load_extraction(db, xid)
    assert back.extraction == ex
    analyses.set_operator_verdict(db, xid, "x1", "uncertain", "too broad")
    assert analyses.latest_extraction(db, "priya").operator["x1"] == ("uncertain", "too broad")
    with pytest.raises(ValueError):
        analyses.set_operator_verdict(db, xid, "x1", "maybe")
    with pytest.raises(KeyError):
        analyses.set_operator_verdict(db, xid, "nope", "accept")


def test_relevance_and_human_judgment_round_trip(tmp_path, priya):
    path = tmp_path / "r.db"
    run_id, ids = record_run(path, priya, "p1-open", {"demo:oracle": ALIGNED})
    db = open_db(path)
    decisions = [
        Decision("attribute", "x1", "llm", None, None, "", "openai:gpt-4o", "Possibly.", False, "v1", "no label"),
        Decision("turn", "s#0", "bm25", True, 1.25, "score"),
        Decision("turn", "s#0", "gold", False),
    ]
    analyses.save_relevance(db, run_id, "p1-open", decisions, texts={("turn", "s#0"): "hello"})
    analyses.save_human_relevance(db, run_id, "p1-open", "turn", "s#0", True)
    analyses.save_human_relevance(db, run_id, "p1-open", "turn", "s#0", False, reason="changed my mind")
    stored = analyses.load_relevance(db, run_id)
    assert [s.decision for s in stored][:3] == decisions
    humans = [s.decision for s in stored if s.decision.decider == "human"]
    assert len(humans) == 1 and humans[0].relevant is False
    analyses.save_relevance(db, run_id, "p1-open", decisions[1:], replace=True)
    assert [s.decision.decider for s in analyses.load_relevance(db, run_id)] == ["human", "bm25", "gold"]

    analyses.save_human_judgment(
        db, run_id, ids["demo:oracle"], kind="rubric", dimension="alignment", score=4, scale=(1, 5), rationale="fits"
    )
    with pytest.raises(ValueError):
        analyses.save_human_judgment(
            db, run_id, ids["demo:oracle"], kind="rubric", dimension="alignment", score=9, scale=(1, 5)
        )
    [j] = load_run(db, run_id).judgments
    assert j.human and not j.heuristic and j.score == 4 and j.judge_model == "human:operator"


def test_cli_judge_rejudges_a_stored_run(tmp_path, priya):
    path = tmp_path / "c.db"
    run_id, ids = record_run(path, priya, "p1-open", {"demo:oracle": ALIGNED, "demo:generic": VIOLATING})
    result = CliRunner().invoke(
        main, ["--db", str(path), "judge", run_id, "--judge", "demo:heuristic"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "demo:heuristic" in result.output and "6 judgments stored" in result.output
    run = load_run(open_db(path), run_id)
    assert len(run.judgments) == 6 and all(j.heuristic and j.parse_ok for j in run.judgments)
    align = {j.response_id: j.score for j in run.judgments if j.dimension == "alignment"}
    assert align[ids["demo:oracle"]] > align[ids["demo:generic"]]


def test_cli_judge_records_llm_judge_failures_with_raw_output(tmp_path, priya):
    """A demo model is a real provider but no judge: its replies carry no score, and that is recorded."""
    path = tmp_path / "d.db"
    run_id, _ = record_run(path, priya, "p1-open", {"demo:oracle": ALIGNED})
    result = CliRunner().invoke(
        main, ["--db", str(path), "judge", run_id, "--judge", "demo:generic", "--kind", "rubric"]
    )
    assert result.exit_code == 1 and "every judgment failed" in result.output, result.output  # yet stored
    js = load_run(open_db(path), run_id).judgments
    assert len(js) == 3
    assert all(not j.parse_ok and j.score is None and j.error and j.judge_model == "demo:generic" for j in js)
    assert all(j.raw for j in js) and all(j.prompt_version == "realpref-rubric-v1" for j in js)


def test_cli_judge_rejects_unknown_judges_and_runs(tmp_path, priya):
    path = tmp_path / "e.db"
    run_id, _ = record_run(path, priya, "p1-mcq", {"demo:oracle": "B"})
    bad = CliRunner().invoke(main, ["--db", str(path), "judge", run_id, "--judge", "vibes"])
    assert bad.exit_code == 1 and "unknown judge" in bad.output
    missing = CliRunner().invoke(main, ["--db", str(path), "judge", "run-nope", "--judge", "choice"])
    assert missing.exit_code == 1 and "run 'run-nope' not found" in missing.output
    ok = CliRunner().invoke(main, ["--db", str(path), "judge", run_id, "--judge", "choice"])
    assert ok.exit_code == 0, ok.output
    [j] = load_run(open_db(path), run_id).judgments
    assert j.kind == "choice" and j.score == 1.0


def test_cli_relevance_and_attributes(tmp_path, priya):
    path = tmp_path / "f.db"
    q = priya.query("p1-open")
    gold = priya.gold_evidence(q, 1)[0]
    retrieved = [
        RetrievedTurn(
            rank=1,
            session_id=gold,
            turn_index=0,
            similarity=0.5,
            is_evidence=True,
            text="Loom walkthrough updates bury details; I want live calls.",
        ),
        RetrievedTurn(
            rank=2,
            session_id="priya-life-01",
            turn_index=0,
            similarity=0.2,
            is_evidence=False,
            text="Bouldering tonight at the gym.",
        ),
    ]
    run_id, _ = record_run(path, priya, "p1-open", {"demo:oracle": ALIGNED}, method="rag", retrieved=retrieved)
    analyses.save_extraction(open_db(path), _extraction("priya"))
    runner = CliRunner()
    res = runner.invoke(main, ["--db", str(path), "relevance", run_id, "--no-embedding"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "attribute x1" in res.output and f"turn {gold}#0" in res.output and "agreement" in res.output
    deciders = {s.decision.decider for s in analyses.load_relevance(open_db(path), run_id)}
    assert deciders == {"gold", "bm25"}
    res = runner.invoke(main, ["--db", str(path), "attributes", "priya"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "The user wants live calls." in res.output and "accept" in res.output
