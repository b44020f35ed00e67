"""CUPID as released (Parquet, ``kixlab/CUPID`` ``test.parquet``): the same instances as JSON Lines,
written to Parquet with pyarrow, must import to the same users, and broken files must say why."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.formats import FormatError, detect_format, load_path
from tests.conftest import REPO
from tests.core.formats.builders import FIXTURES, cupid_instances, write_jsonl

FIXTURE = FIXTURES / "cupid_small.jsonl"


def write_parquet(path: Path, rows: list[dict], **options) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path, **options)
    return path


def dumps(result) -> list[dict]:
    return [b.model_dump() for b in result.bundles]


def _err(path: Path, **kwargs) -> str:
    with pytest.raises(FormatError) as info:
        load_path(path, **kwargs)
    return str(info.value)


def _many(n: int) -> list[dict]:
    """n distinct instances (each with an ``id``), cycling through the fixture's three."""
    base = cupid_instances()
    rows = []
    for i in range(n):
        row = json.loads(json.dumps(base[i % 3]))
        row["id"] = f"i{i:03d}"
        rows.append(row)
    return rows


# -- same users as the JSON path -----------------------------------------------------------
def test_parquet_is_detected_and_imports_exactly_like_the_jsonl(tmp_path):
    path = write_parquet(tmp_path / "test.parquet", cupid_instances())
    assert detect_format(path) == "cupid"
    from_json, from_parquet = load_path(FIXTURE), load_path(path)
    assert from_parquet.format == "cupid"
    assert len(from_parquet.bundles) == 3
    assert dumps(from_parquet) == dumps(from_json)
    assert from_parquet.notes == from_json.notes
    # Arrow gives every struct the union of the fields: absent ones must not turn into meta: {..: None}
    bundle = from_parquet.bundles[0]
    assert [s.meta for s in bundle.sessions] == [{}, {}, {}, {"session_date": "2024-03-11"}]
    assert from_parquet.bundles[1].user.meta.get("extra") is None  # only row 0 has "split"


def test_values_keep_their_json_types(tmp_path):
    rows = cupid_instances()
    for i, row in enumerate(rows):
        row["id"] = 100 + i  # an int id, as json.load gives it
        row["scores"] = {"clarity": 4, "weight": 0.5, "human_checked": True, "tags": ["a", "b"]}
        row["prior_interactions"][0]["turn_count"] = 3
    path = write_parquet(tmp_path / "typed.parquet", rows)
    from_parquet = load_path(path)
    assert dumps(from_parquet) == dumps(load_path(write_jsonl(tmp_path / "typed.jsonl", rows)))
    extra = from_parquet.bundles[0].user.meta["extra"]
    assert extra == {
        "split": "test",
        "scores": {"clarity": 4, "weight": 0.5, "human_checked": True, "tags": ["a", "b"]},
    }
    assert [type(v) for v in extra["scores"].values()] == [int, float, bool, list]
    assert type(from_parquet.bundles[0].sessions[0].meta["turn_count"]) is int
    assert [b.user.id for b in from_parquet.bundles] == ["cupid-100", "cupid-101", "cupid-102"]


def test_dates_become_iso_strings_and_non_text_bytes_are_refused(tmp_path):
    rows = cupid_instances()
    table = pa.Table.from_pylist(rows).append_column("collected", pa.array([dt.date(2025, 3, i + 1) for i in range(3)]))
    pq.write_table(table, tmp_path / "dated.parquet")
    assert load_path(tmp_path / "dated.parquet").bundles[2].user.meta["extra"] == {"collected": "2025-03-03"}

    table = pa.Table.from_pylist(rows).append_column("blob", pa.array([b"ok", b"\xff\xfe", b"x"], pa.binary()))
    pq.write_table(table, tmp_path / "blob.parquet")
    assert (
        _err(tmp_path / "blob.parquet") == "blob.parquet: row 1: blob: expected text, got binary data that is not UTF-8"
    )


def test_a_folder_of_parquet_files(tmp_path):
    rows = cupid_instances()
    write_parquet(tmp_path / "part-0.parquet", rows[:2])
    write_parquet(tmp_path / "part-1.parquet", rows[2:])
    assert detect_format(tmp_path) == "cupid"
    assert dumps(load_path(tmp_path)) == dumps(load_path(FIXTURE))
    rows[0]["instance_type"] = "stable"
    write_parquet(tmp_path / "part-0.parquet", rows[:2])
    assert _err(tmp_path) == (
        "part-0.parquet: row 0: instance_type: expected 'consistent', 'contrastive' or 'changing', got 'stable'"
    )


def test_rows_are_read_in_batches_and_numbered_across_them(tmp_path):
    rows = _many(150)
    path = write_parquet(tmp_path / "big.parquet", rows, row_group_size=40)
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    assert [b.user.id for b in load_path(path).bundles] == [f"cupid-i{i:03d}" for i in range(150)]
    rows[131]["prior_interactions"][0]["dialogue"][0]["content"] = ""
    rows[131]["current_request"] = " "
    path = write_parquet(tmp_path / "big.parquet", rows, row_group_size=40)
    assert _err(path) == "big.parquet: row 131: current_request: expected a non-empty string, got ''"


# -- the same messages as the JSON path (file: record: field) -------------------------------
def _break_role(rows):
    rows[1]["prior_interactions"][1]["dialogue"][0]["role"] = "usr"


def _break_type(rows):
    rows[0]["instance_type"] = "stable"


def _break_checklist(rows):
    rows[2]["current_checklist"] = ["ok", None]


def _empty_dialogue(rows):
    rows[0]["prior_interactions"][2]["dialogue"] = []


def _duplicate(rows):
    rows[1]["instance_type"] = "consistent"


def _blank_preference(rows):
    rows[2]["current_contextual_preference"] = "   "


@pytest.mark.parametrize(
    "mutate", [_break_role, _break_type, _break_checklist, _empty_dialogue, _duplicate, _blank_preference]
)
def test_errors_read_as_for_json_lines_with_rows_for_lines(tmp_path, mutate):
    rows = cupid_instances()
    mutate(rows)
    from_json = _err(write_jsonl(tmp_path / "cupid.jsonl", rows), format="cupid")
    from_parquet = _err(write_parquet(tmp_path / "cupid.parquet", rows), format="cupid")
    expected = from_json.replace("cupid.jsonl", "cupid.parquet")
    for n in (1, 2, 3):
        expected = expected.replace(f"line {n}", f"row {n - 1}")
    assert from_parquet == expected


def test_a_null_is_a_missing_field(tmp_path):
    rows = cupid_instances()
    rows[1]["persona_id"] = None  # Parquet cannot tell null from absent: both read as absent
    assert (
        _err(write_parquet(tmp_path / "c.parquet", rows)) == "c.parquet: row 1: persona_id: required field is missing"
    )
    rows = cupid_instances()
    rows[0]["persona"] = None  # an optional field takes its default, as a JSON null does
    rows[1]["persona"] = "A chemistry teacher."
    result = load_path(write_parquet(tmp_path / "c.parquet", rows))
    assert [b.user.persona for b in result.bundles] == ["", "A chemistry teacher.", ""]


# -- files that are not (readable) CUPID Parquet --------------------------------------------
def test_not_parquet_truncated_or_empty(tmp_path):
    good = write_parquet(tmp_path / "good.parquet", cupid_instances()).read_bytes()
    cases = {
        "text.parquet": b'{"persona_id": "x", "current_request": "y"}\n',
        "truncated.parquet": good[: len(good) // 2],
        "headless.parquet": good[4:],
    }
    for name, body in cases.items():
        (tmp_path / name).write_bytes(body)
        assert _err(tmp_path / name, format="cupid") == (
            f"{name}: not a Parquet file, or a truncated one (no PAR1 marker at its start and end)"
        )
        assert _err(tmp_path / name).startswith(f"{name}: cannot tell the format")  # never a traceback
    (tmp_path / "empty.parquet").write_bytes(b"")
    assert _err(tmp_path / "empty.parquet", format="cupid") == "empty.parquet: file is empty"


def test_a_damaged_footer(tmp_path):
    good = write_parquet(tmp_path / "good.parquet", cupid_instances()).read_bytes()
    (tmp_path / "bad.parquet").write_bytes(good[:4] + b"\0" * (len(good) - 8) + good[-4:])  # magic kept
    message = _err(tmp_path / "bad.parquet", format="cupid")
    assert message.startswith("bad.parquet: cannot read the Parquet footer (")


def test_missing_columns_are_named(tmp_path):
    rows = [{k: v for k, v in r.items() if k != "current_checklist"} for r in cupid_instances()]
    path = write_parquet(tmp_path / "old.parquet", rows)
    assert detect_format(path) == "cupid"
    assert _err(path) == "old.parquet: not CUPID instances: missing column current_checklist"
    rows = [{"persona_id": "p", "current_request": "r"}]
    path = write_parquet(tmp_path / "thin.parquet", rows)
    assert _err(path, format="cupid") == (
        "thin.parquet: not CUPID instances: missing columns current_contextual_preference, current_checklist, "
        "prior_interactions"
    )
    other = write_parquet(tmp_path / "other.parquet", [{"question": "q", "answer": "a"}])
    assert _err(other).startswith("other.parquet: cannot tell the format")


def test_no_rows(tmp_path):
    schema = pa.Table.from_pylist(cupid_instances()).schema
    pq.write_table(schema.empty_table(), tmp_path / "none.parquet")
    assert _err(tmp_path / "none.parquet") == "none.parquet: file has no records"


# -- the size limit ---------------------------------------------------------------------------
def test_the_size_limit_applies_to_the_file(tmp_path):
    path = write_parquet(tmp_path / "c.parquet", cupid_instances())
    limit = path.stat().st_size - 1
    assert _err(path, max_bytes=limit) == (
        f"c.parquet: file is {(limit + 1) / 1e6:.1f} MB, above the {limit / 1e6:.0f} MB import limit "
        "(raise it with --max-mb if this is intended)"
    )
    assert load_path(path, max_bytes=limit + 1).bundles


def test_the_size_limit_applies_to_the_decompressed_data(tmp_path):
    rows = cupid_instances()
    for i, row in enumerate(rows):
        row["notes"] = f"{i}" + "x" * 3_000_000  # compresses to almost nothing
    path = write_parquet(tmp_path / "dense.parquet", rows, compression="zstd")
    size = path.stat().st_size
    assert size < 2_000_000
    message = _err(path, max_bytes=2_000_000)
    assert re.fullmatch(
        r"dense\.parquet: file holds (9|10)\.\d MB of data once decompressed, above the 2 MB import limit "
        r"\(raise it with --max-mb if this is intended\)",
        message,
    ), message
    assert len(load_path(path, max_bytes=20_000_000).bundles) == 3


# -- pyarrow stays off the start-up path -----------------------------------------------------
@pytest.mark.slow
def test_json_imports_and_the_cli_never_import_pyarrow():
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        import tui.cli
        from core.formats import detect_format, load_path
        assert detect_format(Path({str(FIXTURE)!r})) == "cupid"
        load_path({str(FIXTURE)!r})
        print("PYARROW=" + str("pyarrow" in sys.modules))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("PYARROW=False"), result.stdout


def test_the_fields_cupid_never_reads_may_be_absent(tmp_path):
    """CUPID's evaluation reads only persona_id, current_request, current_contextual_preference,
    current_checklist and prior_interactions: a release without instance_type and
    current_context_factor still imports, its oracle evidence matched on the preference alone."""
    dropped = ("instance_type", "current_context_factor")
    rows = [{k: v for k, v in r.items() if k not in dropped} for r in cupid_instances()[:1]]
    (bundle,) = load_path(write_parquet(tmp_path / "test.parquet", rows)).bundles
    assert bundle.user.id == f"cupid-{rows[0]['persona_id']}"
    q = bundle.queries[0]
    assert q.instance_type is None and q.context_factor is None
    same = [
        s.id
        for s in bundle.sessions
        if " ".join((s.contextual_preference or "").split()).casefold()
        == " ".join(rows[0]["current_contextual_preference"].split()).casefold()
    ]
    assert q.evidence_sessions == same
