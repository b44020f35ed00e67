"""StreamingMarkdown's chunking: cuts only at blank lines outside code fences, loses nothing,
and the widget shows every streamed character formatted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from tui.widgets.streaming_markdown import StreamingMarkdown, chunks, split_point


def test_cut_lands_after_a_blank_line_past_the_minimum():
    text = "a" * 30 + "\n\n" + "b" * 30 + "\n\n" + "tail"
    cut = split_point(text, min_chars=40)
    assert text[:cut].endswith("\n\n") and text[cut:] == "tail"


def test_no_cut_inside_a_code_fence():
    text = "intro\n\n```python\n" + "x = 1\n\n" * 20 + "```\nafter"
    assert split_point(text, min_chars=5) == len("intro\n\n"), "the only safe break is before the fence"
    assert split_point(text, min_chars=10) == 0, "no break past 10 characters is outside the fence"


def test_short_text_is_never_cut():
    assert split_point("short\n\ntext", min_chars=100) == 0


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \n`")), max_size=400), st.integers(min_value=1, max_value=60))
def test_chunks_put_back_together_are_the_text(text, size):
    parts = chunks(text, min_chars=size)
    assert "".join(parts) == text
    assert all(p for p in parts[:-1])


class _Host(App):
    def compose(self) -> ComposeResult:
        yield StreamingMarkdown()


async def test_streamed_text_is_all_there_and_rendered():
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(StreamingMarkdown)
        pieces = [f"Paragraph {i} with **bold** words.\n\n" for i in range(120)]
        for piece in pieces:
            view.append(piece)
        await pilot.pause()
        assert view.text == "".join(pieces)
        assert len(view._frozen) > 1, "long text was frozen into chunks"
        rendered = " ".join(s.text for s in view._frozen_lines + view._live_lines)
        assert "Paragraph 0 with bold words." in rendered and "Paragraph 119" in rendered
        assert "**" not in rendered, "markdown is rendered, not shown raw"
        assert view.scroll_offset.y == view.max_scroll_y > 0, "it follows the end while streaming"
        view.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
        view.append("more while the reader is at the top\n\n")
        await pilot.pause()
        assert view.scroll_offset.y == 0, "it does not yank a reader who scrolled up"
        view.set_text("just this")
        await pilot.pause()
        assert view.text == "just this" and not view._frozen


async def test_one_endless_paragraph_is_frozen_in_bounded_pieces():
    from tui.widgets.streaming_markdown import MAX_LIVE_CHARS

    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(StreamingMarkdown)
        for _ in range(400):  # 200,000 characters without a single paragraph break
            view.append("word " * 100)
            assert len(view._live) <= MAX_LIVE_CHARS + 500, "the re-rendered live part stays bounded"
        await pilot.pause()
        assert view.text == "word " * 40_000
        assert len(view._frozen) >= 200_000 // MAX_LIVE_CHARS
