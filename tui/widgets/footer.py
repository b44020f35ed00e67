"""The main screen's footer: Textual's, redrawn once per refresh however often the keys change.

Textual's Footer schedules a full recompose (every key re-mounted and re-styled) for each change
of the screen's bindings; at start-up the keys change three times before the first paint, two of
them within one refresh, so three recomposes ran before the first key could be handled. This one
schedules at most one per refresh (two at start-up); it reads the bindings when it runs, so it
shows the same keys. Its keys are also made with the footer's compact setting, instead of
Textual's default (compact) that their binding to the footer then undoes: two re-stylings per key
per recompose. Written against Textual 8.2.8 (pinned): check it when Textual is upgraded
(``tests/tui/test_footer_recompose.py`` fails if the footer's look or its recompose count changes).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class OneRecomposeFooter(Footer):
    _recompose_pending = False

    def bindings_changed(self, screen: Screen) -> None:  # Textual 8.2's Footer.bindings_changed, coalesced
        self._bindings_ready = True
        if not screen.app.app_focus or self._recompose_pending:
            return
        if self.is_attached and screen is self.screen:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_pending = False
        await self.recompose()

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            # (the palette's key is not bound to the footer: Textual leaves it compact)
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget
