"""End to end through the real CLI and SQLite: import the real conv-30 sample, run locomo-qa with
the locomo judge, and read back the plan sent (LoCoMo's own prompt) and the stored F1 judgment."""

from __future__ import annotations

import json
import re

import pytest

from storage.db import open_db
from storage.runs import load_run
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.conformance.test_locomo_prompts import _expected
from tests.conftest import dataset

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")


def test_run_locomo_qa_with_the_locomo_judge(tmp_path):
    path = dataset("locomo", "locomo10_conv-30.json")
    sample = json.loads(path.read_text(encoding="utf-8"))[0]
    db = str(tmp_path / "prefscope.db")
    cli(db, "import", str(path))
    k = next(i for i, item in enumerate(sample["qa"]) if item["category"] == 2)
    out = cli(
        db, "run", "locomo-conv-30", f"locomo-conv-30-qa{k:03d}", "--method", "locomo-qa",
        "--model", "demo:generic", "--judge", "locomo", "--plain",
    )  # fmt: skip
    run_id = re.search(r"stored as run (\S+)", out).group(1)
    conn = open_db(db)
    try:
        run = load_run(conn, run_id)
    finally:
        conn.close()
    (step,) = run.plan.steps
    assert step.messages[0].content == _expected(sample, sample["qa"][k], ("", ""))
    (j,) = [j for j in run.judgments if j.kind == "locomo"]
    assert j.parse_ok and j.dimension == "f1" and 0.0 <= j.score <= 1.0
    assert j.extra["category"] == 2 and j.extra["gold"] == str(sample["qa"][k]["answer"])
