"""Sizes are bounded: a huge imported text is refused with its place named (or admitted on request
and then shown in part), and a runaway stream is cut, marked and stored without holding up the
other models of the run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.text.clip import VIEW_CHARS
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "users" / "dana.json"


def _user_with_long_turn(tmp_path: Path, chars: int) -> Path:
    data = json.loads(SAMPLE.read_text())
    data["user"]["id"] = "long"
    turns = data["sessions"][0]["turns"]
    turns[1]["content"] = "opening line\n" + "y" * chars
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data))
    return path


def _invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_a_20_mb_turn_is_refused_naming_its_place_and_nothing_is_stored(tmp_path):
    source = _user_with_long_turn(tmp_path, 20 * 1024 * 1024)
    db = tmp_path / "s.db"
    result = _invoke("--db", str(db), "import", str(source))
    assert result.exit_code == 1
    assert "long.json: user 'long' › session 'dana-t01' › turn 1 › content: 20.0 MB" in result.output
    assert "--max-field-mb" in result.output
    assert not db.exists() or sqlite3.connect(db).execute("SELECT count(*) FROM users").fetchone() == (0,)


def test_a_long_turn_admitted_on_request_is_shown_in_part_and_whole_with_full(tmp_path):
    source = _user_with_long_turn(tmp_path, 3 * 1024 * 1024)
    db = str(tmp_path / "s.db")
    refused = _invoke("--db", db, "import", str(source), "--max-field-mb", "2")
    assert refused.exit_code == 1 and "per-field limit of 2 MB" in refused.output
    assert _invoke("--db", db, "import", str(source), "--max-field-mb", "5").exit_code == 0

    part = _invoke("--db", db, "show", "long", "--session", "dana-t01")
    assert part.exit_code == 0
    assert f"{3 * 1024 * 1024 + 13 - VIEW_CHARS:,} more characters (--full prints it all)" in part.output
    assert len(part.output) < 3 * VIEW_CHARS
    whole = _invoke("--db", db, "show", "long", "--session", "dana-t01", "--full")
    assert whole.output.count("y") >= 3 * 1024 * 1024 and "more characters" not in whole.output


def test_a_runaway_stream_is_cut_marked_and_the_other_model_finishes(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    db = str(tmp_path / "r.db")
    endless = Reply(chunks=["word " * 200] * 400)  # 400,000 characters, far past the limit below
    with OpenAIServer([endless]) as server:
        model = "openai:runaway"
        result = _invoke(
            "--db",
            db,
            "run",
            "maya",
            "p1-open",
            "--model",
            model,
            "--model",
            "demo:oracle",
            "--base-url",
            f"{model}={server.base_url}",
            "--plain",
            env={"PREFSCOPE_MAX_ANSWER_CHARS": "10000", "PREFSCOPE_DEMO_TOKENS_PER_S": "0"},
        )
    rows = dict(
        (model_id, (status, text, error))
        for model_id, status, text, error in sqlite3.connect(db).execute(
            "SELECT model, status, text, error FROM responses"
        )
    )
    status, text, error = rows[model]
    assert (status, len(text)) == ("incomplete", 10_000)
    assert "answer size limit" in error and "max_answer_chars" in error
    assert rows["demo:oracle"][0] == "ok"
    assert "incomplete" in result.output


@pytest.mark.parametrize("chars", [100, 8_192, 50_000])
def test_long_texts_are_counted_like_the_whole_text(chars):
    from core.history.tokens import clear_cache, count_tokens, encoder

    text = (SAMPLE.read_text() * 20)[:chars]
    clear_cache()
    exact = len(encoder().encode_ordinary(text))
    # Counted in pieces cut before a space: the same count up to a token or two per piece.
    assert abs(count_tokens(text) - exact) <= max(1, chars // 8_192)


async def test_the_session_screen_shows_a_long_turn_in_part_until_asked(tmp_path):
    from core.formats import load_path
    from storage.users import save_import
    from tests.tui.conftest import app_for, settle, workbench
    from tui.screens.session import SessionScreen

    wb = workbench(tmp_path / "t.db")
    save_import(wb.db, load_path(_user_with_long_turn(tmp_path, 1024 * 1024)))
    app = app_for(wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await app.push_screen(SessionScreen(wb.user("long"), "dana-t01"))
        await pilot.pause()
        shown = "".join(str(s.render()) for s in app.screen.query("Static"))
        assert "more characters (f shows whole turns)" in shown
        assert shown.count("y") < 2 * VIEW_CHARS
        await pilot.press("f")
        await pilot.pause()
        whole = "".join(str(s.render()) for s in app.screen.query("Static"))
        assert whole.count("y") >= 1024 * 1024 and "more characters" not in whole
    wb.close()


async def test_a_judge_reply_without_its_finish_signal_is_a_failed_call_not_a_score():
    from core.providers.base import ModelSpec
    from core.providers.calls import collect
    from core.providers.events import Delta, Done

    class CutShort:  # a provider whose stream ends without the finish signal
        async def stream(self, spec, messages):
            yield Delta('{"score": 5')
            yield Done(None, complete=False)

    completion = await collect(CutShort(), ModelSpec(id="demo:judge"), [])  # type: ignore[arg-type]
    assert completion.text == '{"score": 5' and not completion.ok
    assert "incomplete" in (completion.error or "")
