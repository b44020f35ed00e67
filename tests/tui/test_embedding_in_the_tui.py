"""Retrieval in the workbench: the estimate never embeds, the run's prepare does (showing its
progress, stopping when superseded, never embedding a text twice), and the open user's history is
embedded in the background."""

from __future__ import annotations

from textual.widgets import Select

from core.history import encoders
from core.methods.embed_ahead import ahead_texts
from tests.tui.conftest import app_for, db_rows, run_and_wait, settle, workbench
from tests.waiting import await_until
from tui.widgets.embed_ahead import EmbedAhead
from tui.widgets.estimate_line import EstimateLine

FP32 = "all-MiniLM-L6-v2@onnx-fp32"


class CountingEncoder:
    """The real encoder, recording each text it has embedded (to see that none is embedded twice)."""

    def __init__(self, inner):
        self.inner = inner
        self.texts: list[str] = []

    def encode(self, texts, batch_size=32, on_batch=None):
        def made(idx, vecs):
            self.texts.extend(texts[i] for i in idx)
            if on_batch is not None:
                on_batch(idx, vecs)

        return self.inner.encode(texts, batch_size, made)


def _counting(monkeypatch) -> CountingEncoder:
    engine = encoders.choose_engine("all-MiniLM-L6-v2", "onnx")
    counting = CountingEncoder(encoders.encoder_for(engine))
    monkeypatch.setattr(encoders, "_ENCODERS", {(engine.id, n): counting for n in range(1, 65)})
    return counting


def _vectors(wb) -> int:
    return db_rows(wb, "SELECT count(*) FROM embeddings WHERE model = ?", [FP32])[0][0]


async def _rag_chosen(pilot, app) -> EstimateLine:
    """The run bar set to RAG and its estimate settled; the estimate line."""
    await settle(pilot, app)
    app.screen.query_one("#rb-method", Select).value = "rag"
    await settle(pilot, app)
    return app.screen.query_one(EstimateLine)


async def test_estimate_never_embeds_and_the_run_then_retrieves_for_real(tmp_path, monkeypatch):
    counting = _counting(monkeypatch)
    wb = workbench(tmp_path / "a.db")
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        estimate = await _rag_chosen(pilot, app)
        assert "BM25 picked the retrieved turns" in str(estimate.render())
        assert counting.texts == [] and _vectors(wb) == 0
        await run_and_wait(pilot, app)
        (run_id,) = [r[0] for r in db_rows(wb, "SELECT id FROM runs WHERE method = 'rag'")]
        ranked = db_rows(wb, "SELECT retrieved_by FROM retrievals WHERE run_id = ?", [run_id])
        assert [r[0] for r in ranked] == [FP32] * 5
        assert "retrieval_stand_in" not in db_rows(wb, "SELECT plan FROM runs WHERE id = ?", [run_id])[0][0]
        assert len(counting.texts) == len(set(counting.texts)) == _vectors(wb)


async def test_a_superseded_prepare_stops_and_nothing_is_embedded_twice(tmp_path, monkeypatch):
    counting = _counting(monkeypatch)
    wb = workbench(tmp_path / "a.db")
    app = app_for(wb)
    progress: list[tuple[int, int, int]] = []  # (done, total, texts embedded so far)
    switched: list[int] = []

    def hook(message) -> None:
        if isinstance(message, EstimateLine.Embedding):
            progress.append((message.done, message.total, len(counting.texts)))
            if not switched and message.done < message.total:  # mid-way: choose another query
                switched.append(message.done)
                select = app.screen.query_one("#rb-query", Select)
                queries = [v for _, v in select._options if v is not Select.BLANK]
                app.call_later(setattr, select, "value", queries[2])  # another query, the same history

    async with app.run_test(size=(200, 50), message_hook=hook) as pilot:
        await _rag_chosen(pilot, app)
        first_query = app.screen.query_one("#rb-query", Select).value
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert switched, f"the prepare never reported progress mid-way: {progress}"
        await run_and_wait(pilot, app)
        assert len(counting.texts) == len(set(counting.texts)), "a text was embedded twice"
        assert len(counting.texts) == _vectors(wb)
        ran = {r[0] for r in db_rows(wb, "SELECT query_id FROM runs WHERE method = 'rag'")}
        assert ran and first_query not in ran  # the superseded prepare never ran; the new choice did


async def test_the_open_users_history_is_embedded_in_the_background(tmp_path):
    wb = workbench(tmp_path / "a.db", embed_ahead=True)
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        shown: list[str] = []
        widget = app.screen.query_one(EmbedAhead)

        def shown_then_done() -> bool:
            if widget.has_class("-busy"):
                shown.append(str(widget.render()))
            return bool(shown) and not any(w.is_running for w in app.workers if w.group == "embed-ahead")

        await await_until(
            shown_then_done, timeout=120, every=0.02, what="the background embedding to show its progress and end"
        )
        await settle(pilot, app)
        assert any("embedding maya's history" in s for s in shown)
        assert not widget.has_class("-busy")
        maya = wb.user("maya")
        assert _vectors(wb) == len(ahead_texts(maya, wb.filler_pools()))
