"""f8 saves the screenshot in the outputs folder (never the current directory) and says where."""

from __future__ import annotations

from tests.tui.conftest import app_for, settle, workbench
from tests.waiting import await_until


async def test_f8_writes_into_the_outputs_folder_and_notifies_the_whole_path(tmp_path, monkeypatch):
    cwd = tmp_path / "repo"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    outputs = tmp_path / "outputs"
    wb = workbench(tmp_path / "p.db", outputs_dir=outputs)
    app = app_for(wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("f8")
        shots = await await_until(
            lambda: list(outputs.glob("prefscope_*.svg")), what="a screenshot in the outputs folder"
        )
        messages = [str(n.message) for n in app._notifications]
    assert len(shots) == 1 and shots[0].read_text().lstrip().startswith("<svg")
    assert not list(cwd.iterdir()), "nothing in the current directory"
    assert any(str(shots[0]) in m for m in messages), messages
