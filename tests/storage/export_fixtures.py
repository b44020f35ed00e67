"""Builders for the export / report / batch tests: real SQLite files, runs recorded through the
real RunRecorder from hand-made engine events (so every number in a test is known in advance)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from core.formats import load_path
from core.formats.base import ImportResult
from core.judges.base import Judgment
from core.model import Preference, Query, Session, Turn, User, UserBundle
from core.plan import Message, PromptPlan, PromptStep
from core.providers.base import ModelParams, ModelSpec
from core.run.spec import JudgeScored, ResponseFinished, ResponseStarted, RunFinished, RunSpec, RunStarted
from storage.db import open_db
from storage.recorder import RunRecorder
from storage.users import save_import
from tests.conftest import REPO

MAYA = REPO / "sample_data" / "users" / "maya.json"


def db_with_maya(path: Path) -> Path:
    db = open_db(path)
    try:
        save_import(db, load_path(MAYA))
    finally:
        db.close()
    return path


def tiny_bundle() -> UserBundle:
    """One user, two preferences, queries of every instance type (for factor joins)."""
    return UserBundle(
        user=User(id="u1", name="U"),
        sessions=[
            Session(
                id="s1",
                kind="preference",
                expression_type=1,
                preference_ids=["p1"],
                turns=[Turn(role="user", content="I like tea.")],
            )
        ],
        preferences=[
            Preference(id="p1", text="Likes tea", origin="original"),
            Preference(id="p2", text="Likes green tea", origin="generalized", derived_from=["p1"]),
        ],
        queries=[
            Query(id="q-cons", kind="open", text="Drink?", preference_id="p1", instance_type="consistent"),
            Query(id="q-contr", kind="open", text="Snack?", preference_id="p2", instance_type="contrastive"),
            Query(id="q-mcq", kind="mcq", text="Pick", preference_id="p1", options=["tea", "coffee"], answer="A"),
        ],
    )


def db_with_tiny(path: Path) -> Path:
    db = open_db(path)
    try:
        save_import(db, ImportResult(format="native", bundles=[tiny_bundle()], fillers=[], notes=[]))
    finally:
        db.close()
    return path


def plan(method: str = "zero-shot", history_tokens: int = 100) -> PromptPlan:
    return PromptPlan(
        method=method,
        history_tokens=history_tokens,
        steps=[PromptStep(name="answer", tokens=120, messages=[Message(role="user", content="Q?")])],
    )


class Writer:
    """Records runs through the real RunRecorder; ``judge(...)`` attaches judgments."""

    def __init__(self, path: Path):
        self.recorder = RunRecorder(path)
        self.n = 0

    def run(
        self,
        *,
        user="u1",
        query="q-cons",
        expression=1,
        context="simple",
        method="zero-shot",
        model="openai:gpt-x",
        text="answer",
        status="ok",
        error=None,
        cost=0.001,
        tokens=(100, 20),
        label="",
        extra_steps: int = 0,
        judgments: list[Judgment] = (),
    ) -> tuple[str, str]:
        self.n += 1
        run_id, resp_id = f"run-{self.n:05d}", f"resp-{self.n:05d}"
        spec = RunSpec(
            user_id=user,
            query_id=query,
            expression_type=expression,
            context=context,
            method=method,
            models=[ModelSpec(id=model, params=ModelParams(temperature=0.0))],
            label=label,
        )
        created = (dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=self.n)).isoformat(timespec="seconds")
        rec = self.recorder.record
        rec(RunStarted(run_id, spec, plan(method), created_at=created))
        for k in range(extra_steps):  # an earlier step of a multi-step method: never exported as final
            sid = f"{resp_id}-step{k}"
            rec(ResponseStarted(run_id, sid, spec.models[0], 0, f"step{k}", False, "h" * 64))
            rec(
                ResponseFinished(
                    run_id, sid, 0, f"step{k}", False, "ok", "intermediate", None, 1.0, 2.0, 1, 1, None, False
                )
            )
        rec(ResponseStarted(run_id, resp_id, spec.models[0], 0, "answer", True, f"{self.n:064d}"))
        rec(
            ResponseFinished(
                run_id, resp_id, 0, "answer", True, status, text, error, 12.5, 340.0, tokens[0], tokens[1], cost, False
            )
        )
        for j in judgments:
            rec(JudgeScored(run_id, resp_id, j))
        rec(RunFinished(run_id, "ok" if status == "ok" else status if status in ("error", "cancelled") else "error"))
        return run_id, resp_id

    def close(self) -> None:
        self.recorder.close()


def judgment(
    kind="rubric",
    dimension="alignment",
    score=4.0,
    *,
    judge="openai:judge",
    heuristic=False,
    human=False,
    parse_ok=True,
    extra=None,
    scale=(1.0, 5.0),
    rationale="because",
) -> Judgment:
    return Judgment(
        kind=kind,
        dimension=dimension,
        score=score if parse_ok else None,
        rationale=rationale,
        raw=f"raw {score}",
        parse_ok=parse_ok,
        judge_model=judge,
        prompt_version="v1",
        temperature=0.0,
        scale_min=scale[0],
        scale_max=scale[1],
        heuristic=heuristic,
        human=human,
        error=None if parse_ok else "could not parse",
        extra=extra or {},
    )
