"""Markdown that grows while it streams, at a cost that does not grow with its length.

Measured in bench/tui.py (4 panes × 2,000 tokens at 200 tok/s, headless 200×50), event-loop
lag p99:
- Textual's Markdown + MarkdownStream: every paragraph is a child widget and each growth
  re-lays out and repaints the whole screen: ~270 ms.
- one Static re-rendering the whole reply as Markdown per batch: O(length) per update and still
  a screen re-layout whenever its height changes: ~100-130 ms by the end of a long reply.
- this widget: ~30-45 ms. It is a ScrollView (like Textual's Log): the reply's length is its
  *virtual* size, so growing never re-lays out the screen. The text is kept as frozen chunks (cut
  at a blank line outside code fences once the live part passes ``FREEZE_CHARS``), rendered to
  lines once per width, plus one live tail re-rendered per batch of tokens.
"""

from __future__ import annotations

import re

from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from core.text.terminal_safe import terminal_safe

#: Live text longer than this is frozen at its last paragraph break.
FREEZE_CHARS = 600
#: Live text without any paragraph break is frozen anyway past this: one endless paragraph would
#: otherwise be re-rendered whole on every batch of tokens and stall the other panes.
MAX_LIVE_CHARS = 16_000
_FENCE = re.compile(r"^\s*(```|~~~)")


def split_point(text: str, min_chars: int = FREEZE_CHARS) -> int:
    """Where ``text`` may be cut into a finished part and a live part: just after the last blank
    line that is outside a code fence and at least ``min_chars`` in; 0 when there is none."""
    if len(text) < min_chars:
        return 0
    cut = 0
    inside = False
    position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        if _FENCE.match(line):
            inside = not inside
        elif not inside and not line.strip() and min_chars <= position < len(text):
            cut = position
    return cut


def chunks(text: str, min_chars: int = FREEZE_CHARS) -> list[str]:
    """The whole text as frozen chunks plus a final live chunk (as streaming would leave it)."""
    out: list[str] = []
    while True:
        cut = split_point(text, min_chars)
        if not cut:
            out.append(text)
            return out
        out.append(text[:cut])
        text = text[cut:]


class StreamingMarkdown(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    StreamingMarkdown { height: 1fr; padding: 0 1; overflow-x: hidden; scrollbar-gutter: stable; }
    """

    def __init__(self, *, classes: str | None = None):
        super().__init__(classes=classes)
        self._frozen: list[str] = []
        self._live = ""
        self._frozen_lines: list[Strip] = []
        self._live_lines: list[Strip] = []
        self._width = 0
        #: Follow new output; off while the reader has scrolled up, on again at the bottom.
        self.following = True

    @property
    def text(self) -> str:
        return "".join(self._frozen) + self._live

    # -- content ---------------------------------------------------------------------------
    def append(self, text: str) -> None:
        self._live += text
        cut = split_point(self._live)
        if not cut and len(self._live) > MAX_LIVE_CHARS:
            cut = self._live.rfind("\n") + 1 or len(self._live)
        if cut:
            frozen, self._live = self._live[:cut], self._live[cut:]
            self._frozen.append(frozen)
            self._frozen_lines += self._render_markdown(frozen, gap=True)
        self._live_lines = self._render_markdown(self._live)
        self._content_changed()

    def set_text(self, text: str) -> None:
        """Replace everything (a stored answer, a reset)."""
        parts = chunks(text)
        self._frozen, self._live = parts[:-1], parts[-1]
        self._rerender()
        self._content_changed()

    # -- rendering ---------------------------------------------------------------------------
    def _render_markdown(self, source: str, gap: bool = False) -> list[Strip]:
        if not source.strip() or self._width <= 0:
            return []
        console = self.app.console
        options = console.options.update(width=self._width, height=None)
        from rich.markdown import Markdown  # here: markdown_it costs ~20 ms, and start-up shows no answer

        # Model text is untrusted: escape sequences are shown (\x1b…), never sent to the terminal.
        markdown = Markdown(terminal_safe(source))
        lines = [Strip(line) for line in console.render_lines(markdown, options, pad=False)]
        while lines and not lines[-1].text.strip():
            lines.pop()
        return lines + ([Strip.blank(self._width)] if gap and lines else [])

    def _rerender(self) -> None:
        self._frozen_lines = [s for part in self._frozen for s in self._render_markdown(part, gap=True)]
        self._live_lines = self._render_markdown(self._live)

    def _content_changed(self) -> None:
        self.virtual_size = Size(self._width, len(self._frozen_lines) + len(self._live_lines))
        if self.following:  # after the refresh, when the new size is known
            self.call_after_refresh(self._to_end)
        self.refresh()

    def _to_end(self) -> None:
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.following = new_value >= self.max_scroll_y - 1

    def scroll_home(self, *args, **kwargs) -> None:
        self.following = False  # e.g. a re-opened answer is read from the top
        super().scroll_home(*args, **kwargs)

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width != self._width and width > 0:
            self._width = width
            self._rerender()
            self._content_changed()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        frozen = len(self._frozen_lines)
        if index < frozen:
            strip = self._frozen_lines[index]
        elif index - frozen < len(self._live_lines):
            strip = self._live_lines[index - frozen]
        else:
            return Strip.blank(width, self.rich_style)
        # Segments without a background take the widget's (its theme colours), like Textual's Log.
        return strip.apply_style(self.rich_style).crop_extend(scroll_x, scroll_x + width, self.rich_style)
