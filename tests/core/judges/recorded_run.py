"""Record a synthetic run into a database through the real RunRecorder and real run events."""

from __future__ import annotations

from pathlib import Path

from core.formats.base import ImportResult
from core.plan import Message, PromptPlan, PromptStep, RetrievedTurn
from core.providers.base import ModelSpec
from core.run.spec import ResponseFinished, ResponseStarted, RunFinished, RunSpec, RunStarted, new_id
from storage.db import open_db
from storage.recorder import RunRecorder
from storage.users import save_import


def record_run(
    db_path: Path,
    bundle,
    query_id: str,
    answers: dict[str, str],
    *,
    method: str = "zero-shot",
    retrieved: list[RetrievedTurn] | None = None,
) -> tuple[str, dict[str, str]]:
    """Import ``bundle`` (if needed) and record one finished run whose models answered ``answers``
    (model id -> final text). Returns (run id, model id -> response id)."""
    db = open_db(db_path)
    if not db.execute("SELECT 1 FROM users WHERE id = ?", [bundle.user.id]).fetchone():
        save_import(db, ImportResult(format="native", bundles=[bundle]))
    db.close()
    query = bundle.query(query_id)
    spec = RunSpec(
        user_id=bundle.user.id,
        query_id=query_id,
        expression_type=1,
        method=method,
        models=[ModelSpec(id=m) for m in answers],
    )
    plan = PromptPlan(
        method=method,
        steps=[PromptStep(name="answer", messages=[Message(role="user", content=query.text)], tokens=12)],
        retrieved=retrieved or [],
    )
    run_id = new_id("run")
    recorder = RunRecorder(db_path)
    recorder.record(RunStarted(run_id, spec, plan))
    ids = {}
    for slot, (model, text) in enumerate(answers.items()):
        rid = ids[model] = new_id("resp")
        recorder.record(ResponseStarted(run_id, rid, ModelSpec(id=model), slot, "answer", True, f"hash-{slot}"))
        recorder.record(
            ResponseFinished(
                run_id=run_id,
                response_id=rid,
                slot=slot,
                step="answer",
                is_final_step=True,
                status="ok",
                text=text,
                error=None,
                ttft_ms=5.0,
                duration_ms=20.0,
                input_tokens=12,
                output_tokens=len(text.split()),
                cost_usd=None,
                cache_hit=False,
            )
        )
    recorder.record(RunFinished(run_id, "ok"))
    recorder.close()
    return run_id, ids
