"""save_import is all-or-nothing, and re-importing an id replaces it cleanly."""

from __future__ import annotations

import sqlite3

import pytest

from core.model import Query, Session, Turn, UserBundle
from storage.db import open_db, table_counts
from storage.fillers import load_filler_pool
from storage.search import search_turns
from storage.users import DuplicateInImport, list_users, load_user, save_import
from tests.storage.bundles import filler_pool, import_result, minimal_bundle, rich_bundle


@pytest.fixture
def db(tmp_path):
    database = open_db(tmp_path / "atomic.db")
    yield database
    database.close()


def _unvalidated_duplicate_sessions(user_id: str) -> UserBundle:
    """A bundle the model would reject, built without validation to make SQLite fail late."""
    good = rich_bundle(user_id)
    dup = Session(id="s-life", kind="filler", turns=[Turn(role="user", content="duplicate id")])
    return UserBundle.model_construct(
        user=good.user,
        sessions=[*good.sessions, dup],
        preferences=good.preferences,
        queries=good.queries,
        attributes=good.attributes,
    )


def _unvalidated_dangling_query(user_id: str) -> UserBundle:
    good = minimal_bundle(user_id)
    bad = Query.model_construct(
        id="q",
        kind="open",
        text="t",
        preference_id="missing",
        group=None,
        options=[],
        answer=None,
        explanation="",
        evidence_sessions=[],
        evidence_turns=[],
        gold_preference=None,
        checklist=[],
        context_factor=None,
        instance_type=None,
        meta={},
    )
    return UserBundle.model_construct(
        user=good.user, sessions=good.sessions, preferences=[], queries=[bad], attributes=[]
    )


@pytest.mark.parametrize(
    "make_bad, error",
    [
        (_unvalidated_duplicate_sessions, sqlite3.IntegrityError),  # UNIQUE(user_id, id)
        (_unvalidated_dangling_query, sqlite3.IntegrityError),  # foreign key to preferences
    ],
)
def test_a_failure_late_in_an_import_leaves_the_database_unchanged(db, make_bad, error):
    original = rich_bundle("keep", marker="original")
    save_import(db, import_result(original, fillers=(filler_pool("pool-old"),)))
    before = table_counts(db)
    # Earlier items of the same import (a pool, a new user, a replacement of "keep") must not land either.
    doomed = import_result(
        minimal_bundle("fresh"),
        rich_bundle("keep", marker="replacement"),
        make_bad("broken"),
        fillers=(filler_pool("pool-new"),),
    )
    with pytest.raises(error):
        save_import(db, doomed)
    assert table_counts(db) == before
    assert [u.id for u in list_users(db)] == ["keep"]
    assert load_user(db, "keep") == original
    assert search_turns(db, "replacement") == []
    assert not db.conn.in_transaction


def test_the_same_id_twice_in_one_import_is_refused(db):
    before = table_counts(db)
    with pytest.raises(DuplicateInImport, match="user 'twin'"):
        save_import(db, import_result(minimal_bundle("twin"), minimal_bundle("twin")))
    with pytest.raises(DuplicateInImport, match="filler pool 'p'"):
        save_import(db, import_result(fillers=(filler_pool("p"), filler_pool("p"))))
    assert table_counts(db) == before


def test_reimport_replaces_the_user_and_says_so(db):
    first = save_import(db, import_result(rich_bundle("alex", n_filler=6, marker="firstversion")))
    assert first.users_added == ["alex"] and first.users_replaced == []
    new = rich_bundle("alex", n_filler=1, marker="secondversion")
    second = save_import(db, import_result(new, minimal_bundle("other")))
    assert second.users_replaced == ["alex"] and second.users_added == ["other"]
    assert load_user(db, "alex") == new
    counts = table_counts(db)
    assert counts["sessions"] == len(new.sessions) + 1
    assert counts["turns"] == sum(len(s.turns) for s in new.sessions) + 1
    assert counts["turns_fts"] == counts["turns"]
    assert search_turns(db, "firstversion") == []  # the FTS index forgot the old turns
    assert [h.user_id for h in search_turns(db, "secondversion")] == ["alex"]


def test_reimport_replaces_a_filler_pool(db):
    save_import(db, import_result(fillers=(filler_pool("pool", 5),)))
    summary = save_import(db, import_result(fillers=(filler_pool("pool", 2),)))
    assert summary.pools_replaced == ["pool"]
    assert load_filler_pool(db, "pool") == filler_pool("pool", 2)
    assert table_counts(db)["sessions"] == 2


def test_summary_counts_what_was_written(db):
    bundle = rich_bundle()
    summary = save_import(db, import_result(bundle, fillers=(filler_pool("p", 4),), notes=("a note",)))
    assert summary.sessions == len(bundle.sessions) + 4
    assert summary.turns == sum(len(s.turns) for s in bundle.sessions) + 8
    assert (summary.preferences, summary.queries, summary.attributes) == (3, 5, 2)
    assert summary.notes == ["a note"]
    assert summary.rows == sum(
        n
        for t, n in table_counts(db).items()
        if t in ("users", "filler_pools", "sessions", "turns", "preferences", "queries", "attributes")
    )
