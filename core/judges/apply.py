"""Judging answers: the one place that runs judges over final answers, with one failure policy.

The engine (after each streamed answer) and ``prefscope judge`` (re-judging stored answers) both
call :func:`judge_answer`. A judge that raises becomes a stored failed judgment (``parse_ok`` False,
``score`` None, the exception in ``error``), never an escaping exception and never a number, so one
broken judge cannot take the other judges or the run down. Cancellation still propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from core.judges.base import Judge, JudgeInput, Judgment
from core.providers.calls import Complete


def failed_judgment(judge: Judge, exc: BaseException) -> Judgment:
    return Judgment(
        kind=getattr(judge, "kind", judge.name),
        dimension="*",
        score=None,
        rationale="",
        raw="",
        parse_ok=False,
        judge_model=judge.name,
        prompt_version="",
        error=f"judge failed: {type(exc).__name__}: {exc}",
    )


async def run_judge(judge: Judge, item: JudgeInput, complete: Complete) -> list[Judgment]:
    """One judge on one answer; [] when it does not apply to the query's kind."""
    if item.query.kind not in judge.applies_to:
        return []
    try:
        return await judge.judge(item, complete)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return [failed_judgment(judge, exc)]


async def judge_answer(judges: Sequence[Judge], item: JudgeInput, complete: Complete) -> list[Judgment]:
    """Every applicable judge on one answer, concurrently, judgments in judge order."""
    batches = await asyncio.gather(*(run_judge(j, item, complete) for j in judges))
    return [j for batch in batches for j in batch]
