"""One failure policy for judging answers (engine and ``prefscope judge`` share judge_answer)."""

import asyncio

import pytest

from core.judges.apply import judge_answer
from core.judges.heuristic import HeuristicJudge
from tests.core.judges.conftest import item_for


class Exploding:
    name = "rubric:demo:boom"
    kind = "rubric"
    applies_to = ("open",)

    async def judge(self, item, complete):
        raise RuntimeError("judge endpoint fell over")


class McqOnly:
    name = "mcqonly"
    kind = "choice"
    applies_to = ("mcq",)

    async def judge(self, item, complete):  # pragma: no cover - must not be called for open queries
        raise AssertionError("called for a query kind it does not apply to")


def test_a_raising_judge_is_a_stored_failure_and_the_others_still_score(priya):
    query = next(q for q in priya.queries if q.kind == "open")
    item = item_for(priya, query.id, "Here is a plan that ignores everything.")
    out = asyncio.run(judge_answer([Exploding(), McqOnly(), HeuristicJudge()], item, complete=None))
    failed = [j for j in out if not j.parse_ok and j.judge_model == "rubric:demo:boom"]
    assert len(failed) == 1 and failed[0].score is None
    assert "RuntimeError: judge endpoint fell over" in failed[0].error
    assert any(j.heuristic and j.score is not None for j in out)
    assert out[0] is failed[0]  # judgments come back in judge order


def test_cancellation_is_not_swallowed(priya):
    async def go():
        judging = asyncio.Event()

        class Slow:
            name, kind, applies_to = "slow", "rubric", ("open",)

            async def judge(self, item, complete):
                judging.set()
                await asyncio.Event().wait()  # until cancelled

        query = next(q for q in priya.queries if q.kind == "open")
        task = asyncio.create_task(judge_answer([Slow()], item_for(priya, query.id, "x"), None))
        await asyncio.wait_for(judging.wait(), 30)  # cancelled inside the judge, not before it ran
        task.cancel()
        await asyncio.wait_for(task, 30)  # a swallowed cancellation would return judgments instead

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
