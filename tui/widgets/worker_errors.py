"""One way a failed background job reaches the operator.

``Worker.StateChanged`` does not bubble, so each widget that runs workers forwards its own
events here: the job's description, the error and its type, for long enough to read.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget
from textual.worker import Worker, WorkerState

from core.text.terminal_safe import terminal_safe


def notify_if_failed(node: Widget, event: Worker.StateChanged) -> None:
    if event.state == WorkerState.ERROR:
        worker = event.worker
        node.notify(
            terminal_safe(f"{worker.description} failed: {type(worker.error).__name__}: {worker.error}"),
            severity="error",
            timeout=10,
            markup=False,  # error text is data
        )


def flush_or_notify(node: Widget, workbench) -> None:
    """Wait for the recorder's writes before reading runs back. A write that could not be stored
    (the database stayed locked past the deadline, a full or read-only disk) is shown as an error
    instead of crashing the app; what was stored is still read."""
    from app.records import WriterError

    try:
        workbench.flush()
    except WriterError as exc:
        node.notify(terminal_safe(f"not stored: {exc}"), severity="error", timeout=15, markup=False)


def store_or_notify(node: Widget, save: Callable[[], object]) -> bool:
    """Run a write the operator asked for (a label, a score, a verdict); True once stored. When it
    cannot be stored (locked past the busy timeout, a full or read-only disk) say so and return
    False: the app keeps running and what was stored before stays."""
    import sqlite3

    from app.records import WriterError

    try:
        save()
        return True
    except (WriterError, sqlite3.DatabaseError) as exc:
        node.notify(
            terminal_safe(f"not stored: {exc} (nothing of yours was changed; try again)"),
            severity="error",
            timeout=15,
            markup=False,
        )
        return False
