"""Generated restraint probes end to end (issue 38, item 2, "for the other benchmarks"): add them to
the sample users and to PrefEval users, answer them with demo:oracle and demo:overeager judged by
`restraint`, and the diagnosis labels demo:overeager's answers `misapplied` where demo:oracle holds
the preference back; the funnel shows both in its misapplied column."""

from __future__ import annotations

import csv
import json
import re

import pytest

from app.restraint_probes import add_restraint_probes
from app.workbench import Workbench
from core.analysis.diagnosis import HELD_BACK, MISAPPLIED
from core.settings import Settings
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)
from tests.conftest import dataset

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")
MODELS = ("--model", "demo:oracle", "--model", "demo:overeager")


def probes_of(db: str, users: list[str]) -> list[str]:
    """Add the probes through the app layer; the query ids added, in user order."""
    with Workbench.open(Settings(db=db)) as wb:
        sets = add_restraint_probes(wb, users)
    return [q.id for s in sets for q in s.added]


def answer_and_diagnose(db: str, users: list[str], query_ids: list[str], batch: str) -> None:
    queries = [a for q in query_ids for a in ("--query", q)]
    users_args = [a for u in users for a in ("--user", u)]
    cli(db, "batch", "--name", batch, *users_args, *queries, *MODELS, "--judge", "restraint", "--yes")
    answers = json.loads(cli(db, "diagnose", "--json", "--batch", batch))
    labels: dict[str, list[str]] = {}
    for a in answers:
        labels.setdefault(a["model"], []).append(a["label"])
    n = len(query_ids)  # one probe per user on PrefEval: a query id missing for a user is no cell
    assert labels["demo:overeager"] == [MISAPPLIED] * n, labels
    assert labels["demo:oracle"] == [HELD_BACK] * n, labels
    (table,) = json.loads(cli(db, "report", "--diagnosis", "--by", "model", "--batch", batch, "--json"))["tables"]
    rows = {r["model"]: r for r in table["rows"]}
    assert (rows["demo:overeager"][MISAPPLIED], rows["demo:overeager"]["applied"]) == (n, 0)
    assert (rows["demo:oracle"][MISAPPLIED], rows["demo:oracle"]["applied"]) == (0, n)
    assert rows["demo:overeager"]["misapplied_rate"] == 1.0 and rows["demo:oracle"]["misapplied_rate"] == 0.0
    # the printed funnel: both models in rows, the misapplied column shown
    lines = cli(db, "report", "--diagnosis", "--by", "model", "--batch", batch).splitlines()
    assert lines[1].split()[-3:-1] == ["mis", "applied"]
    counts = {line.split()[0]: line.split()[1:9] for line in lines if line.startswith("demo:")}
    # n, not in ctx, not retr., not known, known¬appl., misappl., applied, undet.
    assert counts["demo:over"][0] == counts["demo:over"][5] == str(n) and counts["demo:over"][6] == "0"
    assert counts["demo:orac"][0] == counts["demo:orac"][6] == str(n) and counts["demo:orac"][5] == "0"


def test_sample_users_probes_misapplied_by_overeager_only(tmp_path):
    db = str(tmp_path / "s.db")
    added = probes_of(db, ["maya"])
    assert added == [f"{p}-open-restraint" for p in ("p1", "p2", "p3", "p4", "p5", "p6", "g1", "g2")]
    assert probes_of(db, ["maya"]) == []  # idempotent: the second time adds nothing
    answer_and_diagnose(db, ["maya"], added[:3], "restraint-maya")


def test_prefeval_users_probes_misapplied_by_overeager_only(tmp_path):
    folder = dataset("prefeval", "explicit_preference")
    db = str(tmp_path / "p.db")
    cli(db, "import", str(folder))
    users = [f"prefeval-travel_restaurant-00{i}" for i in range(3)]
    added = probes_of(db, users)
    assert added == [f"{u}-open-restraint" for u in users]
    answer_and_diagnose(db, users, added, "restraint-prefeval")


def test_the_command_adds_per_user_and_says_why_none(tmp_path):
    db = str(tmp_path / "c.db")
    qa_user = {
        "format": "prefscope.user",
        "version": 1,
        "user": {"id": "qa-only", "name": "QA", "source": "locomo"},
        "queries": [{"id": "qa-1", "kind": "open", "text": "When did Caroline go to the support group?"}],
    }
    # an empty database: the sample users are imported first, as for `run` and `batch`
    out = cli(db, "add-restraint-probes", "--user", "ma*", "--user", "priya")
    assert re.search(r"maya\s+8 added", out) and re.search(r"priya\s+8 added", out), out
    assert "16 restraint probes added" in out and "--judge restraint" in out
    (tmp_path / "qa.json").write_text(json.dumps(qa_user), encoding="utf-8")
    cli(db, "import", str(tmp_path / "qa.json"))
    out = cli(db, "add-restraint-probes", "--user", "qa-only")
    assert re.search(r"qa-only\s+0 added: no query bears a preference", out), out
    again = cli(db, "add-restraint-probes", "--user", "maya")
    assert re.search(r"maya\s+0 added, 8 already stored", again), again
    counts = {u["id"]: u["queries"] for u in json.loads(cli(db, "users", "--json"))["users"]}
    assert counts["maya"] == 32 + 8 and counts["tomasz"] == 36  # only the users named
    cli(db, "prompt", "maya", "p1-open-restraint")  # a stored query like any other


def test_every_query_leaves_probes_out_and_a_pattern_selects_them(tmp_path):
    """A benchmark's own judge would score a probe as if the preference applied: a batch over
    "every query" leaves generated probes out; named, or matched by a pattern, they run."""
    db = str(tmp_path / "b.db")
    added = probes_of(db, ["maya"])

    def queries_run(batch: str) -> set[str]:
        out = tmp_path / f"{batch}.csv"
        cli(db, "export", "--batch", batch, "--out", str(out))
        with out.open(encoding="utf-8", newline="") as f:
            return {row["query_id"] for row in csv.DictReader(f)}

    cli(db, "batch", "--name", "all", "--user", "maya", "--query-kind", "open", "--model", "demo:oracle", "--yes")
    ran = queries_run("all")
    assert ran and not ran & set(added), ran
    cli(db, "batch", "--name", "probes", "--user", "maya", "--query", "*-restraint", "--model", "demo:oracle", "--yes")
    assert queries_run("probes") == set(added)
