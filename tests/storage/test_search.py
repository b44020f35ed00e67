"""Full-text search over turns: stemming, filtering, and user input that never breaks the query."""

from __future__ import annotations

import pytest

from storage.db import open_db
from storage.search import fts_query, search_turns
from storage.users import delete_user, save_import
from tests.storage.bundles import filler_pool, import_result, rich_bundle


@pytest.fixture
def db(tmp_path):
    database = open_db(tmp_path / "search.db")
    save_import(database, import_result(rich_bundle("alex"), rich_bundle("blair"), fillers=(filler_pool("otters"),)))
    yield database
    database.close()


def test_finds_turns_with_stemming_and_ranking(db):
    hits = search_turns(db, "vegetarian restaurant", user_id="alex")
    assert [(h.session_id, h.turn_index) for h in hits] == [("s-pref-1", 0)]
    hit = hits[0]
    assert hit.ref == "s-pref-1#0" and hit.role == "user" and hit.pool_id is None
    assert "[vegetarian]" in hit.snippet and "[restaurants]" in hit.snippet  # porter: restaurant ~ restaurants


def test_user_filter_and_pool_hits(db):
    assert {h.user_id for h in search_turns(db, "Lyon")} == {"alex", "blair"}
    assert {h.user_id for h in search_turns(db, "Lyon", user_id="blair")} == {"blair"}
    pool_hits = search_turns(db, "otters")
    assert pool_hits and all(h.pool_id == "otters" and h.user_id is None for h in pool_hits)
    assert search_turns(db, "otters", user_id="alex") == []


def test_limit(db):
    assert len(search_turns(db, "otters", limit=2)) == 2


@pytest.mark.parametrize(
    "text",
    [
        '"',
        '"quiet',
        'quiet"',
        "AND",
        "OR quiet",
        "NOT",
        "NEAR(quiet kitchen)",
        "*",
        "quie*",
        "content:quiet",
        "(",
        ")",
        "'",
        "-quiet",
        "^quiet",
        "a + b",
        "100%",
        "\\",
        "{x}",
        "quiet AND",
        "😀",
    ],
)
def test_hostile_input_never_raises(db, text):
    search_turns(db, text)


def test_operators_are_searched_literally(db):
    assert {h.session_id for h in search_turns(db, '"quiet"', user_id="alex")} == {"s-pref-1", "s-pref-4a"}
    assert search_turns(db, "quiet OR nonexistentword") == []  # OR is a word here, not an operator
    assert fts_query('say "hi"') == '"say" """hi"""'


def test_blank_query_returns_nothing(db):
    assert search_turns(db, "") == [] and search_turns(db, "   ") == []


def test_deleted_users_leave_the_index(db):
    assert delete_user(db, "alex")
    assert {h.user_id for h in search_turns(db, "Lyon")} == {"blair"}
    assert not delete_user(db, "alex")
