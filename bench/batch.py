"""Benchmark: batch scheduling overhead and CSV export speed.

    .venv/bin/python bench/batch.py [--requests 1000] [--concurrency 16] [--latency 0.05] [--rows 10000]

1. ``--requests`` cells through the real batch path (BatchRunner → EngineCellRunner → Engine →
   OpenAI SDK provider → the project's loopback OpenAI SSE server from ``tests/servers``, with the
   workbench's run recorder and the batch-cell store writing to a temporary SQLite file). Every
   cell gets the same one-message plan, so scheduling and storage are measured, not prepare. Each request waits
   ``--latency`` seconds before its first token. ``--concurrency`` runs in flight and the same
   per-provider limit. Ideal wall time = requests × latency / concurrency; target ratio ≤ 1.2.
   The server runs in a child process. For comparison it also prints the same requests straight
   through the provider (no batch machinery) and the batch path with a demo provider of fixed
   latency (scheduling + storage only), each labelled. If the server cannot start, only the demo
   path runs and the output says so.
2. Export ``--rows`` final responses (each with three judgments, ~1.2 KB of text) from a
   temporary database to CSV with ``storage.export``. Target ≤ 2 s.

Prints figures and ratios; asserts nothing. Never touches the configured database.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _common import figure  # noqa: E402

os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-real-key")  # the SDK insists on one; loopback only

from app.workbench import Workbench  # noqa: E402
from core.model import Query, User, UserBundle  # noqa: E402
from core.plan import Message, PromptPlan, PromptStep  # noqa: E402
from core.providers.base import CALLS_A_MODEL  # noqa: E402
from core.run.batch import BatchRunner, Progress  # noqa: E402
from core.run.cells import EngineCellRunner  # noqa: E402
from core.run.engine import EngineOptions  # noqa: E402
from core.run.grid import Grid, expand  # noqa: E402
from core.settings import Settings  # noqa: E402
from storage.batch_cells import SqliteCellStore  # noqa: E402
from storage.db import open_db  # noqa: E402

EXPORT_TARGET_S = 2.0
RATIO_TARGET = 1.2
WORDS = (
    "the a we you it to of and in that for on with as was but they this my your what about would could "
    "really think maybe restaurant trip weekend coffee book project garden family friend quiet music"
).split()


# -- 1. batch over loopback ----------------------------------------------------------------
class _DemoLatency:
    """Fallback provider: waits ``latency`` then streams a fixed answer (no network)."""

    name = "demo"
    capabilities = CALLS_A_MODEL

    def __init__(self, latency: float):
        self.latency = latency

    async def stream(self, spec, messages):
        from core.providers.events import Delta, Done, Usage

        await asyncio.sleep(self.latency)
        yield Delta("Hello")
        yield Delta(" world.")
        yield Usage(20, 2)
        yield Done("stop")

    def cost_usd(self, spec, usage, *, batch=False):
        return None

    def context_window(self, spec):
        return None


def _cells(n: int, model: dict):
    grid = Grid(name="bench", users=["bench"], models=[model])
    queries = [(f"q{i:05d}", "open") for i in range(n)]
    return expand(grid, all_users=lambda: ["bench"], queries_of=lambda u: queries)


async def _run_batch(db_path: Path, cells, provider_for, concurrency: int) -> tuple[float, Progress]:
    plan = PromptPlan(
        method="zero-shot",
        steps=[PromptStep(name="answer", tokens=12, messages=[Message(role="user", content="Say hello.")])],
    )
    bundle = UserBundle(
        user=User(id="bench"), queries=[Query(id=c.spec.query_id, kind="open", text="Say hello.") for c in cells]
    )

    async def prepare(spec, b):
        return plan

    with Workbench(Settings(db=db_path, judge=""), provider_for=provider_for) as wb:
        recorder = wb.recorder()
        runner = EngineCellRunner(
            wb.provider,
            recorder.record,
            prepare=prepare,
            load_bundle=lambda u: bundle,
            options=EngineOptions(per_provider=concurrency),
        )
        batch = BatchRunner("bench", cells, SqliteCellStore(wb.db, recorder.writer), runner, max_runs=concurrency)
        t0 = time.perf_counter()
        progress = await batch.run()
        wall = time.perf_counter() - t0
    return wall, progress


SERVER_CODE = """
import sys, time
sys.path.insert(0, {repo!r})
from tests.servers.openai_sse import serve
from tests.servers.script import Reply
with serve(Reply(chunks=["Hello", " world."], first_delay_s={latency!r}, usage=(20, 2))) as s:
    print(s.base_url, flush=True)
    sys.stdin.read()  # until the parent closes our stdin
"""


def _start_server(latency: float):
    """The project's loopback OpenAI SSE server in a child process (so its CPU does not share our GIL)."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_CODE.format(repo=str(REPO), latency=latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError("the loopback server did not start (is aiohttp installed?)")
    return proc, url


async def _raw(provider, model, n: int, concurrency: int) -> float:
    """Baseline: the same requests straight through the provider, no engine/recorder/batch."""
    sem = asyncio.Semaphore(concurrency)

    async def one():
        async with sem:
            async for _ in provider.stream(model, [Message(role="user", content="Say hello.")]):
                pass

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - t0


async def _raw_sdk(url: str, n: int, concurrency: int) -> float:
    """Floor: the bare openai SDK (one client) making the same streaming requests."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
    sem = asyncio.Semaphore(concurrency)

    async def one():
        async with sem:
            stream = await client.chat.completions.create(
                model="bench-model",
                messages=[{"role": "user", "content": "Say hello."}],
                stream=True,
                stream_options={"include_usage": True},
            )
            async for _ in stream:
                pass

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    await client.close()
    return time.perf_counter() - t0


def bench_batch(requests: int, concurrency: int, latency: float, tmp: Path) -> None:
    ideal = requests * latency / concurrency
    print(
        f"batch: {requests} requests × {latency * 1000:.0f} ms latency at concurrency {concurrency}; "
        f"ideal {ideal:.3f} s; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )
    try:
        proc, url = _start_server(latency)
    except Exception as exc:  # noqa: BLE001 - reported, then the demo fallback runs
        proc, url = None, None
        print(f"  loopback server unavailable ({exc}); only the demo-latency path is measured")
    if proc is not None:
        from core.providers import get_provider

        try:
            cells = _cells(requests, {"id": "openai:bench-model", "base_url": url})
            provider = get_provider(cells[0].model)
            wall, progress = asyncio.run(_run_batch(tmp / "loop.db", cells, lambda spec: provider, concurrency))
            raw = asyncio.run(_raw(provider, cells[0].model, requests, concurrency))
            sdk = asyncio.run(_raw_sdk(url, requests, concurrency))
        finally:
            proc.stdin.close()
            proc.wait(10)
        print(
            "  [loopback] openai:bench-model via the OpenAI SDK → tests/servers/openai_sse.py (child process),"
            " through BatchRunner/Engine/recorder/batch_cells on a temp SQLite file"
        )
        print(
            f"    ok {progress.ok}, failed {progress.failed}; wall {wall:.3f} s; "
            f"wall / ideal = {wall / ideal:.3f} (target ≤ {RATIO_TARGET})"
        )
        print(
            f"    same requests straight through the provider (no batch): {raw:.3f} s = {raw / ideal:.3f} × ideal;"
            f" batch / provider-only = {wall / raw:.3f}"
        )
        print(
            f"    bare openai SDK, one client, same requests (the floor on this machine): {sdk:.3f} s ="
            f" {sdk / ideal:.3f} × ideal; batch / bare SDK = {wall / sdk:.3f}"
        )
        figure(
            f"batch {requests} loopback requests ÷ bare SDK",
            f"≤ {RATIO_TARGET}×",
            f"{wall / sdk:.3f}× ({wall:.2f} s)",
            f"bare openai SDK {sdk:.2f} s",
        )
    cells = _cells(requests, {"id": "demo:latency"})
    demo = _DemoLatency(latency)
    wall, progress = asyncio.run(_run_batch(tmp / "demo.db", cells, lambda spec: demo, concurrency))
    print(f"  [demo latency] fixed {latency * 1000:.0f} ms provider, same batch path (scheduling + storage only)")
    print(f"    ok {progress.ok}; wall {wall:.3f} s; wall / ideal = {wall / ideal:.3f} (target ≤ {RATIO_TARGET})")


# -- 2. export -----------------------------------------------------------------------------
def _fill(db_path: Path, rows: int) -> None:
    rnd = random.Random(7)
    db = open_db(db_path)
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    params = json.dumps(
        {"temperature": 0.0, "max_tokens": None, "reasoning_effort": None, "seed": None, "timeout_s": 300.0}
    )
    runs, responses, judgments = [], [], []
    for i in range(rows):
        rid, pid = f"run-{i:06d}", f"resp-{i:06d}"
        created = (now + dt.timedelta(seconds=i)).isoformat(timespec="seconds")
        model = ("demo:generic", "openai:gpt-4o-mini", "anthropic:claude-x")[i % 3]
        spec = json.dumps({"user_id": "u", "query_id": f"q{i % 40}", "models": [{"id": model}]})
        runs.append(
            (
                rid,
                created,
                "u",
                f"q{i % 40}",
                1 + i % 4,
                "simple",
                0,
                "zero-shot",
                "bench",
                spec,
                json.dumps({"method": "zero-shot", "answer_format": "open", "history_tokens": 2000}),
                "ok",
            )
        )
        text = " ".join(rnd.choice(WORDS) for _ in range(220))
        if i % 50 == 0:
            text = "=" + text + '\n"quoted"'
        responses.append(
            (
                pid,
                rid,
                0,
                model,
                model.split(":")[0],
                int(model.startswith("demo")),
                params,
                "answer",
                1,
                "h",
                text,
                "ok",
                None,
                300.0,
                2000.0,
                2100,
                230,
                None if i % 3 == 2 else 0.0012,
                0,
                created,
                created,
            )
        )
        for dim in ("awareness", "alignment", "quality"):
            judgments.append(
                (
                    rid,
                    pid,
                    "rubric",
                    dim,
                    float(1 + rnd.randrange(5)),
                    1.0,
                    5.0,
                    "fine",
                    "raw",
                    1,
                    "openai:judge",
                    "v1",
                    0.0,
                    0,
                    0,
                    None,
                    "{}",
                    created,
                )
            )
    with db.conn:
        db.conn.executemany(
            "INSERT INTO runs (id, created_at, user_id, query_id, expression_type, context, seed, "
            "method, label, spec, plan, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            runs,
        )
        db.conn.executemany(
            "INSERT INTO responses (id, run_id, slot, model, provider, is_demo, params, step, "
            "is_final, request_hash, text, status, error, ttft_ms, duration_ms, input_tokens, "
            "output_tokens, cost_usd, cache_hit, started_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            responses,
        )
        db.conn.executemany(
            "INSERT INTO judgments (run_id, response_id, kind, dimension, score, scale_min, scale_max, "
            "rationale, raw, parse_ok, judge_model, prompt_version, temperature, heuristic, human, "
            "error, extra, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            judgments,
        )
    db.close()


def bench_export(rows: int, tmp: Path) -> None:
    from storage.export import export

    db_path = tmp / "export.db"
    _fill(db_path, rows)
    db = open_db(db_path)
    out = tmp / "export.csv"
    t0 = time.perf_counter()
    with open(out, "w", encoding="utf-8", newline="") as fh:
        n = export(db, fh, fmt="csv", layout="wide")
    took = time.perf_counter() - t0
    t0 = time.perf_counter()
    with open(tmp / "export.jsonl", "w", encoding="utf-8") as fh:
        export(db, fh, fmt="jsonl", layout="wide")
    took_jsonl = time.perf_counter() - t0
    floor = _plain_csv(db, tmp / "plain.csv")
    db.close()
    size = out.stat().st_size / 1e6
    print(
        f"export: {n:,} responses (3 judgments each) → CSV {size:.1f} MB in {took:.3f} s "
        f"({n / took:,.0f} rows/s); time / target = {took / EXPORT_TARGET_S:.3f} (target ≤ {EXPORT_TARGET_S} s)"
    )
    print(f"  same rows as JSONL: {took_jsonl:.3f} s")
    print(f"  baseline: one plain SELECT of the answers with their runs, written by csv.writer: {floor:.3f} s")
    figure(
        f"export {n:,} answers to CSV",
        f"≤ {EXPORT_TARGET_S:g} s",
        f"{took:.2f} s",
        f"plain SELECT + csv.writer {floor:.2f} s",
    )


def _plain_csv(db, out: Path) -> float:
    """The floor of any export: the same answers and their runs, one SELECT, written as they come."""
    import csv

    t0 = time.perf_counter()
    with open(out, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(
            db.execute("SELECT * FROM responses p JOIN runs r ON r.id = p.run_id WHERE p.is_final = 1")
        )
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--rows", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="prefscope-bench-") as tmp:
        bench_batch(args.requests, args.concurrency, args.latency, Path(tmp))
        bench_export(args.rows, Path(tmp))


if __name__ == "__main__":
    main()
