"""The run bar's pickers and how a user is chosen: one entry per query with its kind and id (the
highlighted one shows its whole text), users with id, name and source, `prefscope --user ID`,
the palette's "Switch user", and the model picker refusing an unknown provider."""

from __future__ import annotations

from click.testing import CliRunner
from textual.widgets import Input, OptionList, Select, SelectionList

from tests.tui.conftest import app_for, choose_in_palette, settle
from tui.cli import main
from tui.cli.open_app import _build
from tui.screens.models import ModelPicker


def _labels(select: Select) -> list[str]:
    return [str(prompt) for prompt, value in select._options if value is not Select.NULL]


async def test_one_query_entry_per_query_with_kind_and_id_and_the_whole_text_on_highlight(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        bundle = app.screen.bundle
        select = app.screen.query_one("#rb-query", Select)
        labels = _labels(select)
        assert len(labels) == len(bundle.queries) and len(set(labels)) == len(labels)
        kinds = {"open": "[open]", "mcq": "[MCQ]", "tf": "[TF]"}
        for q, label in zip(bundle.queries, labels, strict=True):
            assert label.startswith(f"{kinds[q.kind]} {q.id} "), label
            assert len(label) <= 72 and "\n" not in label
        # On screen the picker shows kind and id, not a cut-off fragment of the text.
        assert "[open] p1-open" in str(select.query_one("#label").render())

        select.focus()
        await pilot.press("enter")  # open the list
        await pilot.press("down")
        await pilot.pause()
        overlay = select.query_one("SelectOverlay", OptionList)
        index = overlay.highlighted
        query = bundle.query(select._options[index][1])
        whole = " ".join(query.text.split())
        assert len(whole) > 72  # the sample queries are longer than an entry
        assert whole in str(overlay.get_option_at_index(index).prompt)
        await pilot.press("down")
        await pilot.pause()
        assert str(overlay.get_option_at_index(index).prompt) == str(select._options[index][0])  # one line again


async def test_the_user_picker_shows_id_name_and_source(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        labels = _labels(app.screen.query_one("#rb-user", Select))
        assert "Maya Okafor (maya, sample)" in labels
        assert all("\n" not in label for label in labels)


async def test_the_palette_switches_the_user(wb):
    app = app_for(wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await choose_in_palette(pilot, "Switch user: Tomasz", "Switch user: Tomasz")
        await settle(pilot, app)
        assert app.screen.bundle.user.id == "tomasz"
        assert app.screen.query_one("#rb-user", Select).value == "tomasz"


async def test_open_on_a_user_given_by_a_unique_prefix(tmp_path):
    app = _build({"db": str(tmp_path / "p.db")}, demo=True, user="pri")
    app._remember_theme = False
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.screen.bundle.user.id == "priya"


def test_an_unknown_user_fails_before_the_screen_opens(tmp_path):
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "p.db"), "--user", "nobody"])
    assert result.exit_code != 0
    assert "nobody" in result.output and "Traceback" not in result.output


async def test_the_model_picker_refuses_an_unknown_provider_and_names_the_known_ones(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(ModelPicker(app.available_models(), ["demo:oracle"]))
        await pilot.pause()
        field = app.screen.query_one("#extra", Input)
        field.focus()
        field.value = "foo:bar"
        await pilot.press("enter")
        await pilot.pause()
        picker = app.screen.query_one(SelectionList)
        assert "foo:bar" not in [picker.get_option_at_index(i).value for i in range(picker.option_count)]
        said = " ".join(str(n.message) for n in app._notifications)
        assert "foo" in said and "openai" in said and "anthropic" in said and "demo" in said
        field.value = "openai:gpt-4o-mini"
        await pilot.press("enter")
        await pilot.pause()
        assert "openai:gpt-4o-mini" in picker.selected
