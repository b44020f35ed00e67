"""One way a failed background job reaches the operator.

``Worker.StateChanged`` does not bubble, so each widget that runs workers forwards its own
events here: the job's description, the error and its type, for long enough to read.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.worker import Worker, WorkerState


def notify_if_failed(node: Widget, event: Worker.StateChanged) -> None:
    if event.state == WorkerState.ERROR:
        worker = event.worker
        node.notify(
            f"{worker.description} failed: {type(worker.error).__name__}: {worker.error}", severity="error", timeout=10
        )
