"""A batch through a provider's batch API, built on the same :class:`BatchSession` as streaming.

The session's cells, cell store, plans (built once per plan key) and recorder are reused; only
the way answers are obtained differs (:mod:`core.run.provider_batch`). Collected answers are
judged by the grid's judges at once, their scores written through the recorder like a streamed
run's.
"""

from __future__ import annotations

from app.batch import BatchSession, BatchSetupError
from core.providers.batch_api import Via
from core.providers.batch_backends import backend, serves
from core.run.provider_batch import PollPolicy, ProviderBatchRunner
from core.run.spec import JudgeScored


def provider_batch(session: BatchSession, via: Via, *, poll: PollPolicy | None = None, on_progress=None):
    """A :class:`ProviderBatchRunner` over ``session``'s cells. Raises :class:`BatchSetupError`
    for a model the batch API cannot serve, or a grid that asks for knowledge probes."""
    from storage.provider_jobs import SqliteJobStore

    wb = session.workbench
    refused = sorted({why for c in session.cells if (why := serves(via, c.model, wb.settings))})
    if refused:
        raise BatchSetupError("; ".join(refused))
    if session.grid.probe:
        raise BatchSetupError("--probe runs each cell's probes after its answer: use it with --via stream")
    from core.providers.batch_api import BatchApiError

    try:  # a missing key is refused here, before any cell is claimed or any job polled
        for model in {c.model.model_dump_json(): c.model for c in session.cells}.values():
            backend(via, model, wb.settings)
    except BatchApiError as exc:
        raise BatchSetupError(str(exc)) from None
    recorder, judges = session.recorder, session.judges

    async def judge(run_ids: list[str]) -> None:
        if not judges:
            return
        for run_id in run_ids:
            run = wb.load_run(run_id)
            finals = [r for r in run.final_responses() if r.status == "ok"]
            if not finals:
                continue
            bundle = wb.user(run.spec.user_id)
            pairs = await wb.judge_responses(judges, run, finals, bundle, bundle.query(run.spec.query_id))
            for response_id, judgment in pairs:
                recorder.record(JudgeScored(run_id, response_id, judgment))

    return ProviderBatchRunner(
        session.name,
        session.cells,
        via,
        session.store,
        SqliteJobStore(wb.db, session.store.writer),
        backend_for=lambda model: backend(via, model, wb.settings),
        provider_for=wb.provider,
        plan_for=session.cell_runner.plan_for,
        retry_failed=session.runner.retry_failed,
        poll=poll,
        progress=session.progress,
        on_progress=on_progress,
        on_collected=judge,
    )
