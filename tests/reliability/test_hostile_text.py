"""Hostile text is inert: escape sequences in imported data and model answers never reach the
terminal, and Rich markup in data is shown literally (never interpreted, never a crash).

The probes of issue 15, kept as tests: a native user whose name, turns, preference and query carry
OSC 52 (clipboard write), OSC 0 (window title), CSI 2J (clear screen), an 8-bit C1 CSI and markup,
through `users`, `show`, `prompt`, a `--plain` run and the TUI; then random text through the
sanitizer and `show`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.text.terminal_safe import terminal_safe
from storage.db import open_db
from storage.runs import list_runs, load_run
from tests.cli_runner import unpaced_demo_models  # noqa: F401  (a fixture)
from tui.cli import main

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # would write "rm -rf ~" to the clipboard
OSC0 = "\x1b]0;pwned\x1b\\"  # would set the window title (ST-terminated)
CSI_CLEAR = "\x1b[2J\x1b[H"  # would clear the screen
C1_CSI = "\x9b2J"  # the same as one 8-bit control
NAME = "[bold]Mal[/"
INST = "[/INST]"
LINK = "[link=file:///etc/passwd]x[/link]"
ALL_SEQUENCES = (OSC52, OSC0, CSI_CLEAR, C1_CSI)

_C1 = re.compile("[\x80-\x9f]")
_SGR = re.compile(r"\x1b\[[0-9;]*m")  # colour / bold codes our own styling may emit


def assert_inert(output: str, *, styled: bool = False) -> None:
    """No ESC and no C1 byte in ``output``; with ``styled``, ESC only as our own SGR colour codes."""
    text = _SGR.sub("", output) if styled else output
    assert "\x1b" not in text, f"ESC reached the terminal: {output!r}"
    assert not _C1.search(output), f"a C1 control reached the terminal: {output!r}"
    assert "\x07" not in output


def hostile_user() -> dict:
    """A native bundle (written as JSON by the test) with hostile text in every shown field."""
    return {
        "format": "prefscope.user",
        "version": 1,
        "user": {"id": "mal", "name": NAME + OSC0},
        "sessions": [
            {
                "id": "s1",
                "kind": "preference",
                "title": f"title {LINK} {CSI_CLEAR}",
                "expression_type": 1,
                "preference_ids": ["p1"],
                "turns": [
                    {"role": "user", "content": f"I like tea {OSC52} {INST} {C1_CSI} {LINK}"},
                    {"role": "assistant", "content": f"Noted {OSC0}{CSI_CLEAR} [red]not red[/red]"},
                ],
            }
        ],
        "preferences": [{"id": "p1", "text": f"Prefers green tea {INST} {OSC52}{C1_CSI}", "evidence": {"1": ["s1"]}}],
        "queries": [
            {"id": "q1", "kind": "open", "text": f"What should I drink? {LINK} {CSI_CLEAR}", "preference_id": "p1"}
        ],
    }


def invoke(db: Path, *args: str, color: bool = False):
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False, color=color)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "hostile.db"
    bundle = tmp_path / "mal.json"
    bundle.write_text(json.dumps(hostile_user()), encoding="utf-8")
    out = invoke(path, "import", str(bundle))
    assert_inert(out)
    return path


def test_the_sanitizer_shows_controls_and_keeps_newlines_and_tabs():
    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("x\r\ny") == "x\ny"
    assert terminal_safe(OSC52) == "\\x1b]52;c;cm0gLXJmIH4K\\x07"
    assert terminal_safe(C1_CSI) == "\\x9b2J"
    assert terminal_safe("\x00\x7f\x85") == "\\x00\\x7f\\x85"
    assert terminal_safe("[bold]é 日本 🙂") == "[bold]é 日本 🙂"  # markup is not its job; printables stay


def test_users_shows_the_name_literally_and_no_escape(db):
    out = invoke(db, "users")
    assert_inert(out)
    assert NAME in out and "\\x1b]0;pwned" in out


def test_show_timeline_and_session_are_inert_and_literal(db):
    timeline = invoke(db, "show", "mal")
    assert_inert(timeline)
    assert NAME in timeline and LINK in timeline and INST in timeline
    session = invoke(db, "show", "mal", "--session", "s1")
    assert_inert(session)
    for literal in (INST, LINK, "[red]not red[/red]", "\\x1b]52;c;", "\\x9b2J", "\\x1b[2J"):
        assert literal in session


@pytest.mark.parametrize("color", [False, True])
def test_prompt_is_inert_with_and_without_colour(db, color):
    out = invoke(db, "prompt", "mal", "q1", "--model", "demo:oracle", "--full", color=color)
    assert_inert(out, styled=color)
    assert INST in out and LINK in out and "\\x1b]52;c;" in out


def test_prompt_json_keeps_the_text_but_escapes_it(db):
    out = invoke(db, "prompt", "mal", "q1", "--model", "demo:oracle", "--json")
    assert_inert(out)
    doc = json.loads(out)
    sent = "".join(m["content"] for step in doc["plan"]["steps"] for m in step["messages"])
    assert OSC52 in sent and C1_CSI in sent  # the data itself is untouched, only its printing


@pytest.mark.usefixtures("unpaced_demo_models")
def test_plain_run_with_markup_in_the_answer_keeps_its_panel_and_judgments(db):
    out = invoke(db, "run", "mal", "q1", "--model", "demo:oracle", "--plain")
    assert_inert(out)
    assert INST in out  # demo:oracle quotes the gold preference, "[/INST]" and all
    assert "demo:oracle (demo)" in out and "╭" in out  # the answer's panel was printed
    conn = open_db(str(db))
    try:
        stored = load_run(conn, list_runs(conn)[0].id)
        (answer,) = stored.final_responses()
        assert answer.status == "ok" and INST in (answer.text or "")
        assert stored.judgments, "the judges' scores were stored"
    finally:
        conn.close()


@pytest.mark.usefixtures("unpaced_demo_models")
def test_runs_listing_is_inert(db):
    invoke(db, "run", "mal", "q1", "--model", "demo:oracle", "--plain")
    assert_inert(invoke(db, "runs"))


@pytest.mark.usefixtures("unpaced_demo_models")
def test_export_stays_verbatim(db, tmp_path):
    """Exports are data, not a view: the stored text goes out as it is (CSV formula escaping aside)."""
    invoke(db, "run", "mal", "q1", "--model", "demo:oracle", "--plain")
    out = tmp_path / "runs.jsonl"
    invoke(db, "export", "--format", "jsonl", "--out", str(out))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    answers = " ".join(str(value) for row in rows for value in row.values())
    assert OSC52 in answers and INST in answers  # demo:oracle quoted the preference, bytes and all


def test_the_live_view_on_a_terminal_draws_answers_inert():
    """The rich Live layout (what `run` shows on a tty): its own cursor and colour codes only."""
    import io

    from rich.console import Console

    from core.plan import Message, PromptPlan, PromptStep
    from core.providers.base import ModelSpec
    from core.run.spec import ResponseFinished, ResponseStarted, RunSpec, RunStarted, TokensArrived
    from tui.cli.live_view import LiveView

    spec = RunSpec(user_id=NAME, query_id=INST, models=[ModelSpec(id="demo:oracle")])
    step = PromptStep(name="answer", messages=[Message(role="user", content="hi")])
    plan = PromptPlan(method="zero-shot", steps=[step], notes=[f"note {LINK} {OSC0}"])
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100, color_system="standard")
    answer = f"{INST} {OSC52} {CSI_CLEAR} {C1_CSI} [bold]"
    with LiveView(spec, plan, console=console) as view:
        view.handle(RunStarted("r1", spec, plan))
        view.handle(ResponseStarted("r1", "a1", spec.models[0], 0, "answer", True, "h"))
        view.handle(TokensArrived("a1", answer, 0.0))
        view.handle(
            ResponseFinished("r1", "a1", 0, "answer", True, "error", answer, f"boom {OSC0}", 1, 2, 1, 1, None, False)
        )
    view.summary(console)
    out = buffer.getvalue()
    assert "\x1b]" not in out and "\x1b[2J" not in out and "\x07" not in out and not _C1.search(out)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)  # our own SGR / cursor codes
    assert "\x1b" not in plain
    for literal in (NAME, INST, LINK, "[bold]", "\\x1b]52;c;", "\\x9b2J"):
        assert literal in plain


# -- the TUI ---------------------------------------------------------------------------------


async def test_tui_loads_the_hostile_user_and_shows_its_name_literally(tmp_path):
    from textual.widgets import OptionList, Select, Static

    from core.formats import load_path
    from storage.users import save_import
    from tests.tui.conftest import app_for, run_and_wait, settle, workbench
    from tests.waiting import await_until
    from tui.screens.session import SessionScreen
    from tui.widgets.judges_tab import JudgesTable
    from tui.widgets.prompt_tab import PromptView

    bundle = tmp_path / "mal.json"
    bundle.write_text(json.dumps(hostile_user()), encoding="utf-8")
    wb = workbench(tmp_path / "tui.db")
    save_import(wb.db, load_path(bundle))
    app = app_for(wb, models=["demo:oracle", "demo:generic"], user="mal")
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await settle(pilot, app)
            select = app.screen.query_one("#rb-user", Select)
            assert select.value == "mal"
            shown = select.query_one("#label", Static).render()
            assert str(shown).startswith(NAME) and "\\x1b]0;pwned" in str(shown)
            query_label = app.screen.query_one("#rb-query", Select).query_one("#label", Static).render()
            assert "[open] q1 →p1 What should I drink? [link=file:///etc/passwd]x[/" in str(query_label)

            await run_and_wait(pilot, app)  # answers quoting "[/INST]", judged
            judges = app.screen.query_one(JudgesTable)
            assert judges.row_count > 0
            prompt = app.screen.query_one(PromptView).text
            assert INST in prompt and "\\x1b]52;c;" in prompt and "\x1b" not in prompt
            app.screen.tabs.show_tab("judges")
            await pilot.pause()

            app.push_screen(SessionScreen(wb.user("mal"), "s1"))
            await pilot.pause()
            texts = " ".join(str(s.render()) for s in app.screen.query(Static))
            assert INST in texts and LINK in texts and "\x1b" not in texts
            app.pop_screen()
            await pilot.pause()

            # The command palette lists queries by their text: searched, highlighted, never parsed.
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"query drink")

            def hit():
                return [o for o in app.screen.query(OptionList).first().options if "drink" in str(o.prompt)]

            (option,) = await await_until(hit, what="the hostile query in the command palette")
            assert "[link=file:///etc/passwd]" in str(option.prompt) and "\x1b" not in str(option.prompt)
            await pilot.press("escape")
            await pilot.pause()
    finally:
        wb.close()


# -- properties ------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        OSC52,
        OSC0,
        CSI_CLEAR,
        C1_CSI,
        NAME,
        INST,
        LINK,
        "[/]",
        "[",
        "\\",
        "[b]",
        "[/b]",
        "\x1b",
        "\x9d",
        "\r",
        "\n",
        "\t",
        "$x",
    ]
)
_HOSTILE = st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=12).map("".join)


@given(_HOSTILE)
def test_sanitized_text_has_no_escape_or_c1(text):
    safe = terminal_safe(text)
    assert "\x1b" not in safe and not _C1.search(safe) and "\r" not in safe
    assert terminal_safe(safe) == safe
    assert safe.count("\n") >= text.count("\n") - text.count("\r\n") and safe.count("\t") == text.count("\t")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_HOSTILE, content=_HOSTILE, query=_HOSTILE)
def test_show_and_users_never_leak_or_crash_on_random_hostile_text(tmp_path_factory, name, content, query):
    folder = tmp_path_factory.mktemp("prop")
    doc = hostile_user()
    doc["user"]["name"] = name
    doc["sessions"][0]["turns"][0]["content"] = content or "x"
    doc["queries"][0]["text"] = query or "q"
    (folder / "u.json").write_text(json.dumps(doc), encoding="utf-8")
    db = folder / "p.db"
    assert_inert(invoke(db, "import", str(folder / "u.json")))
    for args in (("users",), ("show", "mal"), ("show", "mal", "--session", "s1")):
        assert_inert(invoke(db, *args))
