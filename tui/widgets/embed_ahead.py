"""A one-line progress bar for embedding the open user's history in the background (one encoder
thread, beside streaming), so their first RAG run only embeds its question.

It starts when start-up has settled and only when the encoder loads at once (the graph is
exported), pauses while a run's own prepare embeds, and keeps every finished batch when stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from tui.safe_text import safe_text

#: Small batches: a pause or an exit waits for at most one (well under a second on one core).
BATCH = 8


class EmbedAhead(Static):
    @dataclass
    class Progressed(Message):
        user_id: str
        done: int
        total: int

    # A drawn bar, not Textual's ProgressBar: that one animates while it waits, which keeps the
    # screen from ever being idle.
    DEFAULT_CSS = """
    EmbedAhead { height: 1; display: none; color: $text-muted; }
    EmbedAhead.-busy { display: block; }
    """

    def __init__(self, workbench, *, id: str | None = None):
        super().__init__(id=id)
        self.workbench = workbench
        self._user: str | None = None  # whose history is (or was last) embedded
        self._done: set[str] = set()  # users whose history is embedded in this session

    def start(self, user_id: str) -> None:
        """Embed ``user_id``'s history unless it is done or underway."""
        if (
            not self.workbench.settings.embed_ahead
            or self.workbench.readonly
            or user_id in self._done
            or (self._user == user_id and self._busy())
        ):
            return
        self._user = user_id
        # loaded here: the workbench's own connection belongs to this thread
        self._embed(user_id, self.workbench.user(user_id), self.workbench.filler_pools())

    def pause(self) -> None:
        """Stop between batches (a run's prepare takes over the cores)."""
        self.workers.cancel_group(self, "embed-ahead")

    def _busy(self) -> bool:
        return any(w.group == "embed-ahead" and w.is_running for w in self.workers)

    def on_embed_ahead_progressed(self, message: Progressed) -> None:
        if not self._busy():
            return  # a late report of a stopped worker
        self.add_class("-busy")
        width = 20
        filled = round(width * message.done / max(1, message.total))
        bar = "█" * filled + "░" * (width - filled)
        self.update(
            safe_text(f"embedding {message.user_id}'s history for retrieval  {bar}  {message.done:,}/{message.total:,}")
        )

    @work(thread=True, exclusive=True, group="embed-ahead", exit_on_error=False, description="embed history")
    def _embed(self, user_id: str, bundle, pools) -> tuple[str, bool]:
        from core.history.retrieval import Embedder
        from core.methods.embed_ahead import embed_ahead

        worker = get_current_worker()
        with self.workbench.connection() as db:
            embedder = Embedder.configured(self.workbench.settings, self.workbench.embedding_cache(db), threads=1)
            embedder.batch_size = BATCH
            if not embedder.ready():  # exporting the graph or importing torch: leave it to a run
                return user_id, False
            result = embed_ahead(
                bundle,
                pools,
                embedder,
                # a message, not call_from_thread: never waits on the event loop (which may be exiting)
                progress=lambda done, total: self.post_message(self.Progressed(user_id, done, total)),
                stop=lambda: worker.is_cancelled,
            )
        return user_id, not result.stopped

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "embed-ahead" or event.state in (WorkerState.PENDING, WorkerState.RUNNING):
            return
        self.remove_class("-busy")
        if event.state == WorkerState.SUCCESS and isinstance(event.worker.result, tuple):
            user_id, finished = event.worker.result
            if finished:
                self._done.add(user_id)
