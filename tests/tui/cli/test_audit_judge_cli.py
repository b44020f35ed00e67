"""`prefscope audit-judge` on a real demo batch in a real SQLite file: the position table equals
core.analysis.judge_audit.position_audit recomputed here from the stored pair verdicts, the length
slope equals scipy's linregress on the stored scores, and stored verdicts are reused.

The batch: maya, open queries, expressions 1 and 2, normal context, three demo models judged by
the heuristic: 16 prompts × 3 models = 48 answers, 48 pairs of answers to the same prompt."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from scipy.stats import linregress
from scipy.stats import t as student_t

from core.analysis.judge_audit import answer_words, position_audit
from core.judges.heuristic import score_heuristic
from storage.annotation_labels import Label, save_label
from storage.annotation_queues import QueueSpec, create_queue, load_item, query_and_preference
from storage.db import open_db
from tests.cli_runner import cli
from tests.storage.annotation_fixtures import fixture_built, fixture_db_file  # noqa: F401 (fixtures)
from tests.storage.stored_batches import rows
from tui.cli import main

PAIRWISE = "SELECT count(*) FROM judgments WHERE kind = 'pairwise'"


def audit(db: str, *args: str) -> str:
    """The command's output with every run of whitespace made one space (rich wraps long lines)."""
    return " ".join(cli(db, "audit-judge", "demo:heuristic", "--batch", "b1", *args).split())


def stored_orders(db: str) -> dict[tuple[str, str], list]:
    """The heuristic's pair verdicts as stored: (answer 1, answer 2) -> [shown first 1, shown first 2]."""
    out: dict[tuple[str, str], list] = {}
    for rid, score, extra in rows(
        db,
        "SELECT response_id, score, extra FROM judgments WHERE kind = 'pairwise' AND dimension = 'preferred' "
        "AND judge_model = 'demo:heuristic' ORDER BY id",
    ):
        info = json.loads(extra)
        out.setdefault((rid, info["other_response"]), [None, None])[info["shown_first"] - 1] = score
    return out


def pct(value: float, ci: tuple) -> str:
    return f"{value:.0%} [{ci[0]:.0%}, {ci[1]:.0%}]"


def test_the_position_table_equals_position_audit_on_the_stored_verdicts(db):
    out = audit(db)
    assert "position: judged 48 pairs in both orders (0 judgments failed)" in out
    orders = stored_orders(db)
    assert len(orders) == 48 and rows(db, PAIRWISE) == [(96,)]
    a = position_audit([tuple(v) for v in orders.values()])
    assert f"pairs {a.n_pairs} ({a.decided} decided in both orders, {a.undecided} not)" in out
    assert (a.n_pairs, a.decided) == (48, 48)
    assert f"winner flips with the order {a.flips} · {pct(a.flip_rate, a.flip_ci)}" in out
    assert f"both orders chose the first shown {a.flips_to_first}" in out
    assert f"both orders chose the second shown {a.flips_to_second}" in out
    assert f"first shown wins (fair: 50%) {pct(a.first_shown_wins, a.first_shown_ci)}" in out
    assert f"tie verdicts {a.ties}" in out
    assert "human reference none (label a pair queue: annotate Q --kind pair)" in out
    # the offline pair judge's documented bias: equal alignment scores -> the answer shown first wins
    texts = dict(rows(db, "SELECT id, text FROM responses"))
    conn = open_db(db)
    try:
        equal = 0
        for r1, r2 in orders:
            run = rows(db, "SELECT run_id FROM responses WHERE id = ?", r1)[0][0]
            query, preference = query_and_preference(conn, run)
            s1, s2 = (score_heuristic(preference, query, texts[r])["alignment"][0] for r in (r1, r2))
            equal += s1 == s2
    finally:
        conn.close()
    assert a.flips == a.flips_to_first == equal > 0
    assert a.flips_to_second == 0 and a.ties == 0
    assert a.first_shown_wins == pytest.approx((48 + equal) / 96)


def test_the_length_slope_is_scipys_linregress_on_the_stored_scores(db):
    out = audit(db, "--no-pairs")
    for dimension in ("alignment", "awareness", "quality"):
        scored = rows(
            db,
            "SELECT p.text, j.score FROM judgments j JOIN responses p ON p.id = j.response_id "
            "WHERE j.judge_model = 'demo:heuristic' AND j.kind = 'rubric' AND j.dimension = ?",
            dimension,
        )
        assert len(scored) == 48
        words = [answer_words(text) for text, _ in scored]
        fit = linregress(words, [s for _, s in scored])
        slope, half = fit.slope * 100, student_t.ppf(0.975, 46) * fit.stderr * 100
        assert (
            f"rubric:{dimension} length bias: slope {slope:+.3f} per 100 words [{slope - half:.3f}, {slope + half:.3f}], "
            f"r = {fit.rvalue:.2f}, n = 48"
        ) in out
        assert f"rubric:{dimension} self-preference (demo): every answer is from the judge's family (demo)" in out
        assert f"rubric:{dimension} test–retest: demo:heuristic judged each answer once" in out


def test_the_length_table_has_each_models_mean_words_and_score(db):
    out = cli(db, "audit-judge", "demo:heuristic", "--batch", "b1", "--no-pairs", "--metric", "rubric:alignment")
    lines = [" ".join(line.strip("│ ").split()) for line in out.splitlines() if "demo:" in line and "│" in line]
    means = rows(
        db,
        "SELECT p.model, count(*), avg(j.score) FROM judgments j JOIN responses p ON p.id = j.response_id "
        "WHERE j.judge_model = 'demo:heuristic' AND j.dimension = 'alignment' GROUP BY p.model ORDER BY p.model",
    )
    texts = rows(db, "SELECT model, text FROM responses")
    for (model, n, mean), line in zip(means, lines, strict=True):
        words = [answer_words(t) for m, t in texts if m == model]
        assert line.startswith(f"{model} │ {n} │ {sum(words) / len(words):.0f} │ {mean:.2f} │")
    assert "rubric:awareness" not in out  # --metric keeps to the one asked for


def test_a_second_audit_reuses_the_stored_verdicts(db):
    first = audit(db)
    stored = rows(db, "SELECT id, score, extra FROM judgments WHERE kind = 'pairwise' ORDER BY id")
    assert len(stored) == 96
    second = audit(db)
    assert "position: judged" not in second
    assert rows(db, "SELECT id, score, extra FROM judgments WHERE kind = 'pairwise' ORDER BY id") == stored
    table = first[first.index("position (pairwise") : first.index("human reference")]
    assert table in second  # the same numbers


def test_max_pairs_judges_that_many_and_the_next_audit_the_rest(db):
    out = audit(db, "--max-pairs", "5")
    assert "position: judged 5 pairs in both orders" in out and "pairs 5 (5 decided in both orders, 0 not)" in out
    assert rows(db, PAIRWISE) == [(10,)]
    out = audit(db)
    assert "position: judged 43 pairs in both orders" in out and "pairs 48 (48 decided" in out
    assert rows(db, PAIRWISE) == [(96,)]


def test_no_pairs_on_a_fresh_database_judges_nothing(db):
    before = rows(db, "SELECT count(*) FROM judgments")
    out = audit(db, "--no-pairs")
    assert "position: no pair judged yet (run without --no-pairs)" in out
    assert "rubric:alignment length bias" in out
    assert rows(db, "SELECT count(*) FROM judgments") == before and rows(db, PAIRWISE) == [(0,)]


def test_human_pair_labels_are_the_positions_reference(db):
    conn = open_db(db)
    try:
        create_queue(conn, "P", QueueSpec(kind="pair", batches=["b1"], seed=2))
        for position in range(0, 48, 2):  # alice labels every other pair: always the answer shown first
            save_label(conn, load_item(conn, "P", position), "alice", Label(choice="A"), blind=True)
    finally:
        conn.close()
    out = audit(db)
    orders = stored_orders(db)
    human: dict[tuple[str, str], float] = {}
    for rid, score, extra in rows(db, "SELECT response_id, score, extra FROM judgments WHERE human = 1"):
        other = json.loads(extra)["other_response"]
        human[(rid, other)], human[(other, rid)] = score, 1 - score
    a = position_audit([tuple(v) for v in orders.values()], [human.get(k) for k in orders])
    assert a.human_n == 24
    assert f"consistent and agrees with humans {pct(a.consistent_and_agrees_with_human, a.human_ci)} of 24" in out


def test_an_unknown_judge_model_fails_with_one_line(db):
    for model, message in (
        ("nosuch:model", "unknown provider 'nosuch' in model id 'nosuch:model'"),
        ("demo:nosuch", "unknown demo model 'demo:nosuch'"),
    ):
        result = CliRunner().invoke(main, ["--db", db, "audit-judge", model, "--batch", "b1"], catch_exceptions=False)
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output
        assert "audit of" not in result.output
    assert rows(db, PAIRWISE) == [(0,)]


def test_a_judge_that_scored_nothing_here_says_so(db):
    out = " ".join(cli(db, "audit-judge", "openai:gpt-4o-mini", "--batch", "b1", "--no-pairs").split())
    assert "audit of openai:gpt-4o-mini" in out
    assert "length, self-preference: openai:gpt-4o-mini scored no answer here" in out
    assert rows(db, PAIRWISE) == [(0,)]


def test_a_local_judge_always_preferring_the_first_answer_flips_every_pair(db, tmp_path):
    """The acceptance fixture: an OpenAI-compatible endpoint (the loopback server, through the real
    SDK) that always answers "A" flips 100% of the pairs, and every verdict went to the first shown."""
    from tests.servers.openai_sse import OpenAIServer
    from tests.servers.script import Reply

    with OpenAIServer([Reply.text('{"better": "A", "reason": "A follows the preference."}')]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
        result = CliRunner().invoke(
            main,
            ["--db", db, "--config", str(cfg), "audit-judge", "local:first", "--batch", "b1", "--max-pairs", "10"],
            catch_exceptions=False,
        )
        calls = len(server.requests)
    out = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert calls == 20, "each of the 10 pairs in both orders"
    assert "pairs 10 (10 decided in both orders, 0 not)" in out
    assert "winner flips with the order 10 · 100%" in out
    assert "both orders chose the first shown 10" in out and "first shown wins (fair: 50%) 100%" in out
    assert rows(db, "SELECT count(*) FROM judgments WHERE judge_model = 'local:first' AND kind = 'pairwise'") == [(20,)]
