"""Keep Python's full garbage collections out of the way while answers stream.

A full (generation-2) collection walks every tracked object: with a loaded history, the
widgets and Textual's render caches that is a few hundred thousand objects and 150-200 ms,
during which nothing is drawn. Measured in bench/tui.py: 17 such pauses in a 5-second,
four-pane stream, making the event-loop lag p99 ~190 ms. So, for the length of a run:

- collect once and ``gc.freeze()`` what is alive (loaded users, the screen): later
  collections skip it. Unfreezing first lets the previous run's garbage be reclaimed.
- raise the generation-2 threshold so only young-object collections (sub-millisecond) run;
  refcounting still frees everything that is not in a cycle.
The threshold is restored when the run ends, so normal collection resumes.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_active = 0
_saved: tuple[int, int, int] | None = None


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    global _active, _saved
    if _active == 0:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _saved = gc.get_threshold()
        gc.set_threshold(_saved[0], _saved[1], 1_000_000)
    _active += 1
    try:
        yield
    finally:
        _active -= 1
        if _active == 0 and _saved is not None:
            gc.set_threshold(*_saved)
            _saved = None
