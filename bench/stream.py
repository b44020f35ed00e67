"""Streaming overhead: prefscope's engine + storage recorder vs the raw openai SDK.

4 models × 2,000 tokens at 500 tokens/s each from the project's loopback OpenAI-protocol server.
Baseline, measured in the same run: the raw AsyncOpenAI client consuming the same four streams
in one asyncio loop. Target: prefscope wall ÷ baseline wall ≤ 1.05.

Also how far the database trails the streams (what `kill -9` would lose): a reader polls the
stored texts every 10 ms while prefscope streams, and each poll's oldest text not yet stored is
aged against the moment the engine saw it. Baseline: the recorder's checkpoint interval.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import threading
import time
from bisect import bisect_right
from pathlib import Path

from _common import ServerProcess, figure, line

MODELS, TOKENS, RATE = 4, 2000, 500


async def raw_sdk(base_url: str) -> tuple[float, float]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)

    async def one(k: int) -> int:
        n = 0
        stream = await client.chat.completions.create(
            model=f"m{k}",
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                n += 1
        return n

    t0, c0 = time.perf_counter(), time.process_time()
    counts = await asyncio.gather(*(one(k) for k in range(MODELS)))
    assert sum(counts) == MODELS * TOKENS, counts
    return time.perf_counter() - t0, time.process_time() - c0


class StoredTextWatch:
    """Polls the stored texts while a run streams; ``worst_age`` is the longest any text the
    engine had seen waited to be in the database (seconds)."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.seen: dict[str, tuple[list[int], list[float]]] = {}  # response id -> (lengths, times)
        self.polls: list[tuple[float, dict[str, int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def saw(self, response_id: str, text: str, t: float) -> None:
        lengths, times = self.seen.setdefault(response_id, ([], []))
        lengths.append((lengths[-1] if lengths else 0) + len(text))
        times.append(t)

    def _poll(self) -> None:
        con = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5)
        while not self._stop.wait(0.01):
            now = time.perf_counter()
            rows = con.execute("SELECT id, length(text) FROM responses WHERE status = 'running'").fetchall()
            self.polls.append((now, {rid: n or 0 for rid, n in rows}))
        con.close()

    def __enter__(self) -> StoredTextWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def worst_age(self) -> float:
        worst = 0.0
        for now, stored in self.polls:
            for rid, n in stored.items():
                lengths, times = self.seen.get(rid, ([], []))
                first_unstored = bisect_right(lengths, n)  # the first chunk that took the text past n
                if first_unstored < len(times) and times[first_unstored] <= now:
                    worst = max(worst, now - times[first_unstored])
        return worst


async def prefscope(
    base_url: str, db_path: Path | None, watch: StoredTextWatch | None = None
) -> tuple[float, float, int]:
    from core.formats.native import load_file
    from core.plan import Message, PromptPlan, PromptStep
    from core.providers import get_provider
    from core.providers.base import ModelSpec
    from core.run.engine import Engine
    from core.run.spec import RunSpec, TokensArrived
    from storage.recorder import RunRecorder
    from tests.conftest import SAMPLE_DATA

    bundle = load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]
    spec = RunSpec(
        user_id="maya",
        query_id="p1-open",
        models=[ModelSpec(id=f"openai:m{k}", base_url=base_url) for k in range(MODELS)],
    )
    plan = PromptPlan(
        method="zero-shot", steps=[PromptStep(name="answer", messages=[Message(role="user", content="go")])]
    )
    recorder = RunRecorder(db_path) if db_path else None
    tokens = 0

    def emit(event):
        nonlocal tokens
        if isinstance(event, TokensArrived):
            tokens += 1
            if watch:
                watch.saw(event.response_id, event.text, time.perf_counter())
        if recorder:
            recorder.record(event)

    engine = Engine(lambda s: get_provider(s), emit)
    get_provider(spec.models[0])  # import the SDK outside the timing, as the baseline does
    t0, c0 = time.perf_counter(), time.process_time()
    await engine.run(spec, plan, bundle)
    if recorder:
        recorder.close()
    return time.perf_counter() - t0, time.process_time() - c0, tokens


ROUNDS = 3


def main() -> None:
    from statistics import median

    from storage.db import open_db

    print(
        f"bench/stream.py — {MODELS} models × {TOKENS} tokens at {RATE} tok/s each, loopback OpenAI SSE server in its own process; "
        f"median of {ROUNDS} alternating rounds"
    )
    from storage.recorder import CHECKPOINT_S

    base, ps, nr, trail = [], [], [], []
    with ServerProcess(TOKENS, RATE) as base_url, tempfile.TemporaryDirectory() as tmp:
        asyncio.run(raw_sdk(base_url))  # warm-up: imports, connection setup, server loop
        for r in range(ROUNDS):
            db_path = Path(tmp) / f"bench{r}.db"
            open_db(db_path).close()
            base.append(asyncio.run(raw_sdk(base_url)))
            ps.append(asyncio.run(prefscope(base_url, db_path)))
            nr.append(asyncio.run(prefscope(base_url, None)))
        db_path = Path(tmp) / "watched.db"
        open_db(db_path).close()
        with StoredTextWatch(db_path) as watch:
            asyncio.run(prefscope(base_url, db_path, watch))
        trail.append(watch.worst_age())
    base_wall, base_cpu = median(b[0] for b in base), median(b[1] for b in base)
    ps_wall, ps_cpu, n = median(p[0] for p in ps), median(p[1] for p in ps), ps[0][2]
    nr_wall, nr_cpu = median(p[0] for p in nr), median(p[1] for p in nr)
    ideal = TOKENS / RATE
    line("ideal stream duration (s)", f"{ideal:.2f}")
    line("raw openai SDK, 4 streams in one loop: wall (s)", f"{base_wall:.2f}")
    line("prefscope engine + recorder: wall (s)", f"{ps_wall:.2f}")
    line("ratio prefscope ÷ raw SDK (wall)", f"{ps_wall / base_wall:.3f}", "target ≤ 1.05")
    line("per-token overhead, CPU (µs/token)", f"{(ps_cpu - base_cpu) / n * 1e6:.1f}", f"over {n} tokens")
    line(
        "checkpoint/recorder overhead, CPU (µs/token)",
        f"{(ps_cpu - nr_cpu) / n * 1e6:.1f}",
        "engine with vs without recorder",
    )
    line("engine without recorder: wall ratio to raw SDK", f"{nr_wall / base_wall:.3f}")
    line("database trails the stream by at most (s)", f"{trail[0]:.3f}", f"checkpoint every {CHECKPOINT_S} s")
    figure(
        f"stream {MODELS}×{TOKENS} tok: engine + recorder ÷ raw SDK",
        "≤ 1.05×",
        f"{ps_wall / base_wall:.3f}× ({ps_wall:.2f} s)",
        f"raw openai SDK {base_wall:.2f} s",
    )
    figure(
        "stream: the database trails the streams by at most (what kill -9 loses)",
        "≤ 2 × checkpoint",
        f"{trail[0]:.3f} s = {trail[0] / CHECKPOINT_S:.2f} × checkpoint",
        f"checkpoint interval {CHECKPOINT_S} s",
    )


if __name__ == "__main__":
    main()
