"""`prefscope import test.parquet`: CUPID as released imports the same users as the same instances in JSON Lines."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from storage.db import open_db
from storage.users import load_user, user_ids
from tests.cli_runner import cli
from tests.core.formats.builders import FIXTURES, cupid_instances
from tui.cli import main


def _stored(db_path: str) -> dict[str, dict]:
    db = open_db(db_path)
    try:
        return {uid: load_user(db, uid).model_dump() for uid in user_ids(db)}
    finally:
        db.close()


def test_import_parquet_stores_the_same_users_as_the_jsonl(tmp_path):
    parquet = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(cupid_instances()), parquet)
    json_db, parquet_db = str(tmp_path / "json.db"), str(tmp_path / "parquet.db")

    cli(json_db, "import", str(FIXTURES / "cupid_small.jsonl"))
    out = cli(parquet_db, "import", str(parquet))
    assert "Imported test.parquet (cupid): 3 users added" in out

    stored = _stored(parquet_db)
    assert sorted(stored) == [
        "cupid-teacher_017-changing",
        "cupid-teacher_017-consistent",
        "cupid-teacher_017-contrastive",
    ]
    assert stored == _stored(json_db)

    def listing(db: str) -> list[dict]:  # what `prefscope users` shows, less the import time
        return [
            {k: v for k, v in u.items() if k != "imported_at"} for u in json.loads(cli(db, "users", "--json"))["users"]
        ]

    assert listing(parquet_db) == listing(json_db)
    assert {u["format"] for u in listing(parquet_db)} == {"cupid"}


def test_a_broken_parquet_file_exits_1_with_the_file_named(tmp_path):
    bad = tmp_path / "test.parquet"
    bad.write_bytes(b"PAR1 but nothing else")
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "p.db"), "import", "--format", "cupid", str(bad)])
    assert result.exit_code == 1
    assert "test.parquet: not a Parquet file, or a truncated one" in result.output
    assert not (tmp_path / "p.db").exists()
