"""The composition root is built from one service per use case, and the services never overlap."""

from __future__ import annotations

import inspect

from app.analyses import Analyses
from app.annotation import Annotation
from app.base import Base
from app.data import Data
from app.judge_audit import JudgeAudit
from app.runs import Runs
from app.workbench import Workbench
from core.settings import Settings

SERVICES = [Data, Runs, Analyses, Annotation, JudgeAudit]


def test_the_workbench_is_the_services_on_one_base():
    assert all(issubclass(Workbench, s) and issubclass(s, Base) for s in SERVICES)


def test_no_two_services_define_the_same_method():
    owners: dict[str, list[str]] = {}
    for service in [Base, *SERVICES]:
        for name, _ in inspect.getmembers(service, inspect.isfunction):
            if name in vars(service):
                owners.setdefault(name, []).append(service.__name__)
    assert {n: o for n, o in owners.items() if len(o) > 1 and not n.startswith("__")} == {}


def test_the_services_answer_on_a_fresh_database(tmp_path):
    with Workbench.open(Settings(db=tmp_path / "w.db")) as wb:
        users = wb.user_ids()
        assert users and users == sorted(u.id for u in wb.users())
        assert wb.resolve_user_id(users[0]) == users[0]
        assert wb.response_texts([f"missing-{i}" for i in range(1200)]) == {}  # more ids than one statement takes
        assert wb.short_run_ids([]) == {} and wb.annotation_queues() == []
        data, short = wb.runs_grid()
        assert data.rows == [] and short == {}
