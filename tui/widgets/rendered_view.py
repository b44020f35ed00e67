"""A scrollable view of one Rich renderable, rendered once per width, drawn line by line.

A Static with a long text (the Prompt tab holds a whole prompt, tens of thousands of characters)
is re-wrapped whenever the screen re-lays out: measured 0.25 s for a ~50K-character prompt each
time. Here the lines are rendered once per width and only the visible ones are drawn.
"""

from __future__ import annotations

from rich.console import RenderableType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class RenderedView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    RenderedView { height: 1fr; padding: 0 1; overflow-x: hidden; scrollbar-gutter: stable; }
    """

    def __init__(self, renderable: RenderableType = "", *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.renderable: RenderableType = renderable
        self._lines: list[Strip] = []
        self._width = 0

    def update(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._render_lines()
        self.scroll_home(animate=False, immediate=True)

    def on_resize(self) -> None:
        if self.scrollable_content_region.width != self._width:
            self._render_lines()

    def _render_lines(self) -> None:
        self._width = self.scrollable_content_region.width
        if self._width <= 0:
            self._lines = []
        else:
            console = self.app.console
            options = console.options.update(width=self._width, height=None)
            self._lines = [Strip(line) for line in console.render_lines(self.renderable, options, pad=False)]
        self.virtual_size = Size(self._width, len(self._lines))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = scroll_y + y
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        return self._lines[index].apply_style(self.rich_style).crop_extend(scroll_x, scroll_x + width, self.rich_style)
