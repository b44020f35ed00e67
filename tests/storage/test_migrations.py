"""Opening a database: pragmas, numbered migrations applied once and recorded."""

from __future__ import annotations

import sqlite3
import sys
import textwrap

import pytest

from storage.db import open_db, table_counts
from storage.migrations import MigrationError, applied, current_version, discover, migrate


def test_fresh_file_gets_every_migration_recorded(tmp_path):
    path = tmp_path / "nested" / "dir" / "fresh.db"
    db = open_db(path)
    assert path.exists()
    names = [m.name for m in discover()]
    assert names[:2] == ["m001_users", "m002_embeddings"]
    assert [row[1] for row in applied(db)] == names
    assert [row[0] for row in applied(db)] == [m.version for m in discover()]
    assert db.execute("PRAGMA user_version").fetchone()[0] == discover()[-1].version
    for table in (
        "users",
        "sessions",
        "turns",
        "turns_fts",
        "preferences",
        "queries",
        "attributes",
        "filler_pools",
        "embeddings",
    ):
        assert db[table].exists(), table


def test_reopening_does_not_reapply(tmp_path):
    path = tmp_path / "again.db"
    first = applied(open_db(path))
    db = open_db(path)
    assert applied(db) == first  # same rows, same applied_at
    assert migrate(db) == []
    assert table_counts(db)["migrations"] == len(first)


def test_default_path_comes_from_settings(tmp_path):
    # conftest points PREFSCOPE_DB into this test's tmp dir
    db = open_db()
    assert (tmp_path / "prefscope.db").exists()
    assert current_version(db) == discover()[-1].version


def test_every_connection_has_wal_foreign_keys_and_busy_timeout(tmp_path):
    path = tmp_path / "p.db"
    open_db(path).close()
    db = open_db(path)
    assert db.journal_mode == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    with pytest.raises(sqlite3.IntegrityError):
        db.execute(
            "INSERT INTO preferences (user_id, id, position, text, origin) VALUES ('ghost', 'p', 0, 't', 'original')"
        )


def _package(tmp_path, name: str, modules: dict[str, str]):
    root = tmp_path / "pkgs"
    pkg = root / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for module, body in modules.items():
        (pkg / f"{module}.py").write_text(textwrap.dedent(body))
    sys.path.insert(0, str(root))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(root))


def test_adding_a_migration_applies_only_the_new_one(tmp_path):
    pkg = _package(
        tmp_path,
        "mig_demo_add",
        {
            "m001_a": "def up(db):\n    db.execute('CREATE TABLE a (x)')\n",
            "m002_b": "def up(db):\n    db.execute('CREATE TABLE b (x)')\n",
            "helpers": "X = 1\n",  # not a migration: ignored
        },
    )
    migrations = discover(pkg)
    db = open_db(tmp_path / "m.db", migrate=False)
    assert migrate(db, migrations[:1]) == ["m001_a"]
    assert migrate(db, migrations) == ["m002_b"]
    assert migrate(db, migrations) == []
    assert [r[1] for r in applied(db)] == ["m001_a", "m002_b"]


def test_a_failing_migration_leaves_no_trace(tmp_path):
    pkg = _package(
        tmp_path,
        "mig_demo_fail",
        {
            "m001_ok": "def up(db):\n    db.execute('CREATE TABLE ok (x)')\n",
            "m002_bad": "def up(db):\n    db.execute('CREATE TABLE half (x)')\n    raise RuntimeError('boom')\n",
        },
    )
    db = open_db(tmp_path / "f.db", migrate=False)
    with pytest.raises(RuntimeError, match="boom"):
        migrate(db, discover(pkg))
    assert db["ok"].exists()
    assert not db["half"].exists()
    assert [r[1] for r in applied(db)] == ["m001_ok"]


def test_duplicate_numbers_are_refused(tmp_path):
    pkg = _package(
        tmp_path,
        "mig_demo_dup",
        {
            "m001_a": "def up(db):\n    pass\n",
            "m001_b": "def up(db):\n    pass\n",
        },
    )
    with pytest.raises(MigrationError, match="two migrations numbered 001"):
        discover(pkg)


def test_a_database_newer_than_the_code_is_refused(tmp_path):
    path = tmp_path / "newer.db"
    db = open_db(path)
    db.execute("INSERT INTO migrations (version, name, applied_at) VALUES (999, 'm999_future', 'x')")
    db.close()
    with pytest.raises(MigrationError, match=r"migration\(s\) \[999\]"):
        open_db(path)


def test_a_migration_numbered_into_a_gap_is_still_applied(tmp_path):
    pkg = _package(
        tmp_path,
        "mig_demo_gap",
        {
            "m001_a": "def up(db):\n    db.execute('CREATE TABLE a (x)')\n",
            "m003_c": "def up(db):\n    db.execute('CREATE TABLE c (x)')\n",
            "m002_b": "def up(db):\n    db.execute('CREATE TABLE b (x)')\n",
        },
    )
    db = open_db(tmp_path / "g.db", migrate=False)
    everything = discover(pkg)
    assert migrate(db, [everything[0], everything[2]]) == ["m001_a", "m003_c"]
    assert migrate(db, everything) == ["m002_b"]  # merged later, numbered below the newest
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3


def test_a_fresh_file_is_stamped_ours_and_a_legacy_one_is_stamped_on_open(tmp_path):
    from storage.db import APPLICATION_ID

    path = tmp_path / "p.db"
    assert open_db(path).execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA application_id = 0")  # a database made before the stamp existed
    raw.close()
    db = open_db(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert migrate(db) == []


def test_another_applications_file_is_refused_byte_for_byte_untouched(tmp_path):
    import hashlib

    from storage.db import DatabaseRefused

    path = tmp_path / "theirs.db"
    raw = sqlite3.connect(path)
    raw.executescript("CREATE TABLE migrations (id INTEGER); CREATE TABLE notes (t TEXT);")  # a name clash
    raw.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    for readonly in (False, True):
        with pytest.raises(DatabaseRefused, match="another application"):
            open_db(path, readonly=readonly)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_a_readonly_open_brings_an_old_schema_up_to_date_first(tmp_path):
    path = tmp_path / "old.db"
    db = open_db(path, migrate=False)
    migrate(db, discover()[:2])
    db.close()
    db = open_db(path, readonly=True)
    assert current_version(db) == discover()[-1].version
    db.close()


def test_a_readonly_open_of_a_missing_file_creates_nothing(tmp_path):
    from storage.db import DatabaseRefused

    with pytest.raises(DatabaseRefused, match="no database at"):
        open_db(tmp_path / "missing" / "p.db", readonly=True)
    assert not (tmp_path / "missing").exists()
