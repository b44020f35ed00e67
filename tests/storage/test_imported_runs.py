"""Imported answers stored as runs: linking, fallback users, all-or-nothing, idempotence."""

from __future__ import annotations

import json

import pytest

from core.formats import load_path
from core.formats.base import ImportResult
from core.results import load_results
from storage.db import open_db
from storage.imported_runs import ImportedAnswerError, save_imported
from storage.runs import load_run
from storage.users import save_import
from tests.conftest import dataset

SFT_TURNS = {"2turn": 0, "30turn": 28, "70turn": 68}


def _counts(db) -> tuple[int, ...]:
    return tuple(
        db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "responses", "prompts", "users")
    )


def test_sft_folder_against_the_benchmark_topic(tmp_path):
    root = dataset("prefeval")
    db = open_db(tmp_path / "x.db")
    save_import(db, load_path(root / "explicit_preference" / "travel_restaurant.json"))
    summary = save_imported(db, load_results(root / "SFT"))
    assert len(summary.runs_added) == 6 * 56
    # 52 of the 56 records have the benchmark's exact preference and question; the other 4 say
    # "absolutely" where the benchmark does not, and become users of their own (one per record).
    assert (summary.matched, summary.unmatched, len(summary.users_added)) == (6 * 52, 6 * 4, 4)
    assert _counts(db) == (336, 336, 336, 60)

    raw_dir = root / "SFT" / "single_pref_remind" / "travel_restaurant"
    runs = {
        (r[1], r[2]): r[0] for r in db.execute("SELECT id, label, json_extract(plan, '$.imported.record') FROM runs")
    }
    for label, index, user in [
        ("2turn", 0, "prefeval-travel_restaurant-000"),
        ("30turn", 33, None),  # "absolutely": a user of its own
        ("70turn", 55, "prefeval-travel_restaurant-055"),
    ]:
        name = f"mistral8x7b_travel_restaurant_{label}.json"
        raw = json.loads((raw_dir / name).read_text())[index]
        run = load_run(db, runs[(f"imported:single_pref_remind/travel_restaurant/{name}", index)])
        if user is None:
            assert run.spec.user_id.startswith("prefeval-results-travel_restaurant-")
        else:
            assert run.spec.user_id == user
        query = db.execute(
            "SELECT q.text, pr.text FROM queries q JOIN preferences pr ON pr.user_id = q.user_id AND pr.id = q.preference_id "
            "WHERE q.user_id = ? AND q.id = ?",
            [run.spec.user_id, run.spec.query_id],
        ).fetchone()
        assert query[0] == raw["question"]
        assert query[1] == raw["preference"]
        assert run.spec.turns == SFT_TURNS[label]
        assert (run.spec.method, run.spec.context, run.status) == ("prefeval-remind", "prefeval-turns", "ok")
        assert run.spec.expression_type == 1  # explicit preferences
        (answer,) = run.final_responses()
        assert (answer.text, answer.model, answer.is_demo, answer.cost_usd) == (
            raw["response_to_q"],
            "imported:mistral8x7b",
            False,
            None,
        )
        assert any(name in note for note in run.plan.notes)

    again = save_imported(db, load_results(root / "SFT"))
    assert (again.runs_added, again.runs_existing, again.users_added) == ([], 336, [])
    assert _counts(db) == (336, 336, 336, 60)


def _prefeval_file(tmp_path, records, name="claude3hk_travel_hotel_5interturn.json"):
    folder = tmp_path / "zero-shot" / "travel_hotel"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _rec(i: int) -> dict:
    return {"preference": f"I avoid thing {i}.", "question": f"Plan my day {i}?", "response_to_q": f"Answer {i}"}


def test_unmatched_records_share_one_fallback_user_across_files(tmp_path):
    db = open_db(tmp_path / "x.db")
    a = _prefeval_file(tmp_path, [_rec(0), _rec(1)])
    b = _prefeval_file(tmp_path, [_rec(0), _rec(1)], name="claude3hk_travel_hotel_10interturn.json")
    first = save_imported(db, load_results(a))
    second = save_imported(db, load_results(b))
    assert (len(first.runs_added), first.unmatched, len(first.users_added)) == (2, 2, 2)
    assert (len(second.runs_added), len(second.users_added)) == (2, 0)
    turns = sorted(r[0] for r in db.execute("SELECT json_extract(spec, '$.turns') FROM runs"))
    assert turns == [5, 5, 10, 10]
    assert _counts(db) == (4, 4, 4, 2)


def test_generic_jsonl_round_trip_and_all_or_nothing(tmp_path, priya):
    db = open_db(tmp_path / "x.db")
    save_import(db, ImportResult(format="native", bundles=[priya]))
    query = priya.queries[0].id
    good = {"user": priya.user.id, "query": query, "model": "gpt-4o-mini", "answer": "Mine.", "turns": 3}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "query": "nope"}) + "\n", encoding="utf-8")
    with pytest.raises(ImportedAnswerError) as err:
        save_imported(db, load_results(path))
    assert (err.value.record, err.value.path) == ("line 2", "query")
    assert _counts(db)[:3] == (0, 0, 0)

    messages = [{"role": "user", "content": "What should I cook?"}]
    path.write_text(json.dumps({**good, "messages": messages, "method": "zero-shot"}) + "\n", encoding="utf-8")
    (run_id,) = save_imported(db, load_results(path)).runs_added
    run = load_run(db, run_id)
    assert (run.spec.user_id, run.spec.query_id, run.spec.turns, run.spec.method) == (
        priya.user.id,
        query,
        3,
        "zero-shot",
    )
    assert [m.model_dump() for m in run.plan.steps[0].messages] == messages
    assert run.final_responses()[0].text == "Mine."
    assert db.execute("SELECT provider, is_demo FROM responses").fetchone() == ("imported", 0)
    assert save_imported(db, load_results(path)).runs_existing == 1


def test_recorded_scores_are_stored_as_their_own_source(tmp_path, priya):
    """A score the results file recorded is a judgment of ``recorded:<judge>``: source "recorded",
    never pooled with judgments prefscope makes; an unusable one is kept as a parse failure."""
    from core.judges.aggregate import source_of, summarize
    from core.results.model import ImportedAnswer, RecordedScore, ResultsImport
    from storage.runs import load_run

    db = open_db(tmp_path / "x.db")
    save_import(db, ImportResult(format="native", bundles=[priya]))
    recorded = [
        RecordedScore(kind="longmemeval", dimension="accuracy", score=1.0, scale_min=0, scale_max=1,
                      judge="gpt-4o-2024-08-06", raw="true"),
        RecordedScore(kind="longmemeval", dimension="accuracy", score=None, judge="gpt-4o-2024-08-06", raw="maybe"),
    ]  # fmt: skip
    answer = ImportedAnswer(
        format="jsonl", source_file="h.jsonl", source_sha256="0" * 64, record=0, record_label="line 1",
        user_id=priya.user.id, query_id=priya.queries[0].id, model="m", answer="An answer.", recorded=recorded,
    )  # fmt: skip
    (run_id,) = save_imported(db, ResultsImport(format="jsonl", answers=[answer])).runs_added
    judgments = load_run(db, run_id).judgments
    assert [(j.judge_model, j.score, j.parse_ok) for j in judgments] == [
        ("recorded:gpt-4o-2024-08-06", 1.0, True),
        ("recorded:gpt-4o-2024-08-06", None, False),
    ]
    assert {source_of(j) for j in judgments} == {"recorded"}
    assert summarize(judgments) == []  # the default, LLM judges made here, holds none of them
    (group,) = summarize(judgments, source="recorded")
    assert (group.source, group.n, group.failed, group.mean) == ("recorded", 1, 1, 1.0)
