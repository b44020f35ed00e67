"""Reproducible context: a user's filler comes from the pools the spec names (default: the user's
own source's pool), so importing other data never changes an existing user's prompt."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from app.workbench import Workbench
from core.formats.native import dump_filler
from core.model import FillerPool, Session, Turn
from core.settings import Settings
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.conftest import SAMPLE_DATA
from tests.core.formats.builders import prefeval_files, write_tree
from tui.cli import main

MAYA_NORMAL = ("prompt", "maya", "p1-open", "--context", "normal", "--json")


def sample_db(tmp_path) -> str:
    db = str(tmp_path / "p.db")
    cli(db, "import", str(SAMPLE_DATA / "users"))
    cli(db, "import", str(SAMPLE_DATA / "filler"))
    return db


def other_pool(tmp_path, pool_id: str = "otters", source: str = "sample") -> str:
    """A native filler pool file of long sessions (so a 35K target draws some of them)."""
    sessions = [
        Session(
            id=f"otter-{i}",
            kind="filler",
            turns=[
                Turn(role="user", content=f"Tell me about otters, part {i}. " + "Otters hold hands. " * 200),
                Turn(role="assistant", content="Sea otters float on their backs. " * 200),
            ],
        )
        for i in range(30)
    ]
    path = tmp_path / f"{pool_id}.json"
    path.write_text(dump_filler(FillerPool(id=pool_id, name="Otter facts", source=source, sessions=sessions)))
    return str(path)


def test_importing_prefeval_filler_leaves_mayas_prompt_byte_identical(tmp_path):
    db = sample_db(tmp_path)
    before = cli(db, *MAYA_NORMAL)
    cli(db, "import", str(write_tree(tmp_path / "prefeval", prefeval_files())))
    assert "prefeval-inter-turns" in cli(db, "users")
    assert cli(db, *MAYA_NORMAL) == before
    plan = json.loads(before)["plan"]
    assert plan["filler_pools"] == ["sample-everyday"]
    assert json.loads(before)["filler_pools"] == ["sample-everyday"]


def test_importing_a_pool_of_another_source_leaves_the_prompt_unchanged(tmp_path):
    db = sample_db(tmp_path)
    before = cli(db, *MAYA_NORMAL)
    cli(db, "import", other_pool(tmp_path, source="otherbench"))
    assert cli(db, *MAYA_NORMAL) == before


def test_filler_pool_selects_the_named_pool(tmp_path):
    db = sample_db(tmp_path)
    cli(db, "import", other_pool(tmp_path))
    out = json.loads(cli(db, *MAYA_NORMAL, "--filler-pool", "otters"))
    assert out["plan"]["filler_pools"] == ["otters"]
    assert out["spec"]["filler_pools"] == ["otters"]
    fillers = [c["session_id"] for c in out["plan"]["context"] if c["filler"]]
    assert fillers and all(sid.startswith("otter-") for sid in fillers)
    text = cli(db, "prompt", "maya", "p1-open", "--context", "normal", "--filler-pool", "otters")
    assert "filler from pool otters" in text
    both = json.loads(cli(db, *MAYA_NORMAL, "--filler-pool", "otters", "--filler-pool", "sample-everyday"))
    assert both["plan"]["filler_pools"] == ["otters", "sample-everyday"]


def test_default_pool_is_shown_instead_of_database(tmp_path):
    db = sample_db(tmp_path)
    text = cli(db, "prompt", "maya", "p1-open", "--context", "normal")
    assert "filler from pool sample-everyday" in text and "filler from database" not in text


def test_unknown_pool_fails_naming_the_known_ones(tmp_path):
    db = sample_db(tmp_path)
    for command in (MAYA_NORMAL, ("run", "maya", "p1-open", "--context", "normal", "--model", "demo:generic")):
        r = CliRunner().invoke(main, ["--db", db, *command, "--filler-pool", "nope"])
        assert r.exit_code != 0
        assert "no filler pool 'nope'" in r.output and "known pools: sample-everyday" in r.output
        assert "Traceback" not in r.output


def test_batch_takes_filler_pool_and_refuses_an_unknown_one(tmp_path):
    db = sample_db(tmp_path)
    args = ["--db", db, "batch", "--user", "maya", "--query", "p1-open", "--context", "normal"]
    args += ["--model", "demo:generic", "--dry-run", "--yes"]
    r = CliRunner().invoke(main, [*args, "--filler-pool", "nope"])
    assert r.exit_code != 0 and "known pools: sample-everyday" in r.output
    ok = CliRunner().invoke(main, [*args, "--filler-pool", "sample-everyday"])
    assert ok.exit_code == 0, ok.output


@pytest.mark.usefixtures("unpaced_demo_models")
def test_run_stores_the_pools_and_export_shows_them(tmp_path):
    db = sample_db(tmp_path)
    cli(db, "run", "maya", "p1-open", "--context", "normal", "--model", "demo:generic", "--plain")
    cli(db, "run", "maya", "p1-open", "--model", "demo:generic", "--plain")  # simple: no filler drawn
    out = tmp_path / "runs.csv"
    cli(db, "export", "--out", str(out))
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    by_context = {r["context"]: r["filler_pools"] for r in rows}
    assert by_context == {"normal": "sample-everyday", "simple": ""}


def test_workbench_lists_pools_with_each_users_default(tmp_path):
    db = sample_db(tmp_path)
    cli(db, "import", str(write_tree(tmp_path / "prefeval", prefeval_files())))
    with Workbench(Settings(db=db)) as wb:
        maya = wb.filler_pool_choices("maya")
        assert [(p.id, p.source) for p in maya.pools] == [
            ("prefeval-inter-turns", "prefeval"),
            ("sample-everyday", "sample"),
        ]
        assert maya.pools[1].sessions > 0 and maya.pools[1].name
        assert maya.default == ["sample-everyday"]
        prefeval_user = next(u.id for u in wb.users() if u.source == "prefeval")
        assert wb.filler_pool_choices(prefeval_user).default == ["prefeval-inter-turns"]
        wb.check_filler_pools(["sample-everyday"])
        with pytest.raises(LookupError, match="known pools: prefeval-inter-turns, sample-everyday"):
            wb.check_filler_pools(["nope"])
