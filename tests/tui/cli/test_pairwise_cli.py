"""`prefscope pairwise` on two stored runs, judged by a local endpoint (the loopback server):
pass needs all 4 swapped orders, so a judge that always answers "A" is right in exactly two and
the instance fails; its win comparisons are position-biased and average to a tie. Everything is
stored and reaches `prefscope report --interpref`."""

from __future__ import annotations

import json

from click.testing import CliRunner

from storage.db import open_db
from storage.runs import list_runs
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main


def test_pairwise_pass_and_win_through_a_local_judge(tmp_path):
    db = str(tmp_path / "p.db")

    def run(*a):
        return CliRunner().invoke(main, ["--db", db, *a], catch_exceptions=False)

    for user in ("maya", "tomasz"):
        r = run("run", user, "p1-open", "--model", "demo:generic", "--model", "demo:oracle", "--plain")
        assert r.exit_code == 0, r.output
    newest, oldest = list_runs(open_db(db))
    reply = json.dumps({"answer_for_preference_1": "A", "winner": "X"})
    with OpenAIServer([Reply.text(reply)]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
        r = CliRunner().invoke(
            main,
            ["--db", db, "--config", str(cfg), "pairwise", oldest.id, newest.id, "--judge", "local:judge"],
            catch_exceptions=False,
        )
        calls = len(server.requests)
    assert r.exit_code == 0, r.output
    assert calls == 2 * 4 + 2, "4 orders per model, 2 presentation orders for the one model pair"
    assert "2 / 4" in r.output and "win rate demo:generic vs demo:oracle: 0.50" in r.output
    rows = (
        open_db(db)
        .execute("SELECT dimension, score, parse_ok FROM judgments WHERE kind = 'pairwise' AND run_id = ?", [oldest.id])
        .fetchall()
    )
    assert sorted(d for d, _, _ in rows).count("pass") == 2
    assert {s for d, s, _ in rows if d == "pass"} == {0.0}
    report = CliRunner().invoke(main, ["--db", db, "report", "--interpref"], catch_exceptions=False)
    assert report.exit_code == 0 and "pass" in report.output.lower()
