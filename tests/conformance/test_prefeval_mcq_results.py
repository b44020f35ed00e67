"""PrefEval MCQ answers imported onto the real PrefEval topic (../shared/datasets/prefeval, skipped
when absent, never copied): the results file is written here the way benchmark_classification.py
writes one (reference PROTOCOL.md §5: seed-41 shuffle, `correct_idx`, Claude's replies stored with
the `<choice>` prefill prepended), and a generic JSONL names the stored MCQ queries. The answers go
on the stored MCQ queries, the choice judge reads them with PrefEval's parser against the letter the
model was shown (not prefscope's stored order), and `report` gives the accuracy."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest

from tests.cli_runner import cli
from tests.conftest import dataset

TOPIC = "travel_restaurant"
N = 8
#: PROTOCOL §5.1: the correct letters of a fresh run's first tasks (seed 41, random.sample).
PROTOCOL_LETTERS = "CDCABACD"
#: Records whose MCQ file words the preference otherwise than the explicit file (the import's note):
#: no stored user has their texts, so they go on users of their own.
REWORDED = {1, 4, 7}


def _reply(i: int, gold: str) -> str:
    """Claude's replies as PrefEval stores them ("<choice>" + reply): right, except record 2
    (no letter: wrong) and record 3 (another letter: wrong)."""
    if i == 2:
        return "<choice>I cannot pick one"
    if i == 3:
        return "<choice>" + ("A" if gold != "A" else "B")
    return "<choice>" + gold + ("</choice>" if i % 2 else "")


def _results_file(tmp_path) -> tuple:
    records = json.loads(dataset("prefeval", "mcq_options", f"{TOPIC}.json").read_text())[:N]
    rng = random.Random(41)
    out, golds = [], []
    for i, rec in enumerate(records):
        shuffled = rng.sample(rec["classification_task_options"], 4)
        gold = "ABCD"[shuffled.index(rec["classification_task_options"][0])]
        reply = _reply(i, gold)
        choice = None if i == 2 else reply[len("<choice>")]
        golds.append(gold)
        out.append({**rec, "response_to_pref": "Noted.", "shuffled_options": shuffled, "response_to_q": reply,
                    "choice": choice, "correct_idx": gold})  # fmt: skip
    folder = tmp_path / "benchmark_results" / "explicit" / "mcq_results" / "zero-shot" / TOPIC
    folder.mkdir(parents=True)
    (folder / f"claude3hk_{TOPIC}_2interturn.json").write_text(json.dumps(out, indent=1))
    return tmp_path / "benchmark_results", golds


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "p.db")
    cli(path, "import", str(dataset("prefeval")))
    return path


def _judged(db: str) -> dict:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT r.query_id, q.answer, j.score, j.extra FROM judgments j JOIN runs r ON r.id = j.run_id "
            "JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id "
            "WHERE j.judge_model = 'parser:choice' ORDER BY r.query_id"
        ).fetchall()
    return {q: (stored, score, json.loads(extra)) for q, stored, score, extra in rows}


def test_official_mcq_results_land_on_the_stored_mcq_queries_and_score_as_shown(db, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    results, golds = _results_file(tmp_path)
    assert "".join(golds) == PROTOCOL_LETTERS
    out = cli(db, "import-results", str(results))
    assert f"{N} runs added" in out and f"{N - len(REWORDED)} of {N} matched a stored user" in out
    cli(db, "judge", "--label", "imported:*", "--judge", "choice")
    judged = _judged(db)
    linked = {q: v for q, v in judged.items() if q.startswith(f"prefeval-{TOPIC}-")}
    assert sorted(linked) == [f"prefeval-{TOPIC}-{i:03d}-mcq" for i in range(N) if i not in REWORDED]
    want = {i: 0.0 if i in (2, 3) else 1.0 for i in range(N)}
    for i in set(range(N)) - REWORDED:
        stored, score, extra = linked[f"prefeval-{TOPIC}-{i:03d}-mcq"]
        assert (score, extra["gold"], extra["gold_from"], extra["prefilled"]) == (
            want[i],
            golds[i],
            "shown options",
            True,
        )
    # the stored order is prefscope's own: scoring against it would have been wrong here
    assert any(linked[f"prefeval-{TOPIC}-{i:03d}-mcq"][0] != golds[i] for i in set(range(N)) - REWORDED)
    assert sorted(s for _, s, _ in judged.values()) == sorted(want.values())
    report = cli(db, "report", "--by", "model")
    row = next(
        ln.split() for ln in report.splitlines() if ln.startswith("imported:claude3hk") and "parser:choice" in ln
    )
    assert (row[4], row[6]) == (str(N), f"{6 / N:.3f}")


def test_a_jsonl_naming_a_stored_prefeval_mcq_query_is_read_by_prefevals_parser(db, tmp_path):
    with sqlite3.connect(db) as conn:
        options, stored = conn.execute(
            "SELECT options, answer FROM queries WHERE id = ?", [f"prefeval-{TOPIC}-000-mcq"]
        ).fetchone()
    options = json.loads(options)
    aligned = options["ABCD".index(stored)]
    seen = "A" if stored != "A" else "B"  # the model saw the aligned option elsewhere than stored
    others = [o for o in options if o != aligned]
    shown = others[: "ABCD".index(seen)] + [aligned] + others["ABCD".index(seen) :]
    block = "\n".join(f"{'ABCD'[k]}. {o}" for k, o in enumerate(shown))
    asked = {"role": "user", "content": f"Which one?\n{block}\nAnswer with <choice>X</choice>."}
    prefill = {"role": "assistant", "content": "<choice>"}
    base = {"user": f"prefeval-{TOPIC}-000", "query": f"prefeval-{TOPIC}-000-mcq", "answer_format": "mcq-prefeval"}
    lines = [
        {**base, "model": "claude-a", "answer": f"{seen}</choice>", "messages": [asked, prefill]},  # prefill: right
        {**base, "model": "claude-b", "answer": seen, "messages": [asked]},  # no prefill, no tag: wrong
        {
            **base,
            "model": "claude-c",
            "answer": f"<choice>{stored}</choice>",
            "messages": [asked],
        },  # stored letter: wrong
        {**base, "model": "claude-d", "answer": f"<choice>{seen}</choice>", "messages": [asked]},  # tag written: right
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    cli(db, "import-results", str(path))
    cli(db, "judge", "--label", "imported:answers.jsonl", "--judge", "choice")
    with sqlite3.connect(db) as conn:
        scores = dict(
            conn.execute(
                "SELECT p.model, j.score FROM judgments j JOIN responses p ON p.id = j.response_id "
                "WHERE j.kind = 'choice'"
            ).fetchall()
        )
    assert scores == {
        "imported:claude-a": 1.0,
        "imported:claude-b": 0.0,
        "imported:claude-c": 0.0,
        "imported:claude-d": 1.0,
    }
