"""The main screen's footer (tui.widgets.footer): one recompose for a burst of binding changes,
and keys styled as Textual's own footer styles them, wide and narrow."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from tests.tui.conftest import app_for, settle, workbench
from tui.widgets.footer import OneRecomposeFooter


def _keys(footer: Footer) -> list[tuple[str, bool]]:
    return [(key.key, key.has_class("-compact")) for key in footer.query(FooterKey)]


async def test_a_burst_of_binding_changes_recomposes_the_footer_once(tmp_path, monkeypatch):
    app = app_for(workbench(tmp_path / "f.db"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        footer = app.screen.query_one(OneRecomposeFooter)
        recomposes = []
        original = Footer.recompose

        async def counted(self):
            recomposes.append(self)
            await original(self)

        monkeypatch.setattr(Footer, "recompose", counted)
        screen = app.screen
        # three changes of the keys before a refresh, published as the screen publishes them
        screen.call_later(lambda: [screen.bindings_updated_signal.publish(screen) for _ in range(3)])
        await settle(pilot, app)
        assert recomposes == [footer]
        assert "ctrl+r" in [key for key, _ in _keys(footer)]


async def test_footer_keys_follow_the_footer_compact_setting_except_the_palette_key(tmp_path):
    app = app_for(workbench(tmp_path / "f.db"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        footer = app.screen.query_one(Footer)
        wide = _keys(footer)
        assert wide and all(compact == (key == "ctrl+p") for key, compact in wide)  # Textual's palette key: compact
        await pilot.resize_terminal(80, 24)
        await settle(pilot, app)
        screen = app.screen
        screen.call_later(screen.bindings_updated_signal.publish, screen)  # recomposed while narrow
        await settle(pilot, app)
        assert footer.compact and all(compact for _, compact in _keys(footer))
