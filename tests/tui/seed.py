"""Deterministic stored runs for snapshot tests: the real engine with the real demo providers,
recorded by the real recorder, then the clock fields (created_at, ttft, duration) normalised."""

from __future__ import annotations

import asyncio

from core.judges import judges_for
from core.providers.base import ModelSpec
from core.run.spec import RunSpec


def seed_run(
    wb,
    run_id: str,
    *,
    models: list[str],
    query: str = "p1-open",
    method: str = "zero-shot",
    context: str = "simple",
    expression: int = 4,
    created_at: str = "2026-01-15T09:30:00+00:00",
) -> str:
    spec = RunSpec(
        user_id="maya",
        query_id=query,
        expression_type=expression,
        context=context,
        method=method,
        models=[ModelSpec(id=m) for m in models],
        judges=["demo:heuristic"],
    )
    bundle = wb.user("maya")
    plan = wb.prepare(spec, bundle, wb.filler_pools())
    recorder = wb.recorder()

    async def go():
        engine = wb.engine(recorder.record, judges=judges_for(spec, wb.settings))
        await engine.run(spec, plan, bundle, run_id=run_id)

    asyncio.run(go())
    wb.flush()
    with wb.db.conn:
        wb.db.execute("UPDATE runs SET created_at = ? WHERE id = ?", [created_at, run_id])
        for i, (rid,) in enumerate(
            wb.db.execute("SELECT id FROM responses WHERE run_id = ? ORDER BY slot", [run_id]).fetchall()
        ):
            wb.db.execute(
                "UPDATE responses SET ttft_ms = ?, duration_ms = ?, started_at = ? WHERE id = ?",
                [120.0 + 10 * i, 2400.0 + 100 * i, f"{created_at[:19]}.{i:03d}", rid],
            )
    return run_id
