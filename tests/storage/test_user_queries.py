"""Queries added to a stored user after its import (generated restraint probes): appended after the
user's own, read back exactly, an id already stored left as it is, an unknown user refused."""

from __future__ import annotations

import pytest

from core.analysis.restraint_probes import restraint_probes
from core.model import Query
from storage.db import open_db
from storage.user_queries import add_queries
from storage.users import UnknownUser, load_user, save_import
from tests.storage.bundles import import_result, rich_bundle


@pytest.fixture
def db(tmp_path):
    database = open_db(tmp_path / "q.db")
    yield database
    database.close()


def test_added_queries_come_back_after_the_users_own(db):
    bundle = rich_bundle()
    save_import(db, import_result(bundle))
    probes = restraint_probes(bundle).added
    assert probes
    assert add_queries(db, bundle.user.id, probes) == [q.id for q in probes]
    loaded = load_user(db, bundle.user.id)
    assert loaded.queries == [*bundle.queries, *probes]
    assert loaded.model_copy(update={"queries": bundle.queries}) == bundle
    # again: nothing added, nothing changed; a duplicate id within one call counts once
    assert add_queries(db, bundle.user.id, [*probes, probes[0]]) == []
    extra = Query(id="extra", kind="open", text="What is 2 + 2?")
    assert add_queries(db, bundle.user.id, [extra, extra]) == ["extra"]
    assert [q.id for q in load_user(db, bundle.user.id).queries][-1] == "extra"


def test_an_unknown_user_is_refused_and_nothing_written(db):
    with pytest.raises(UnknownUser):
        add_queries(db, "nobody", [Query(id="x", kind="open", text="What is 2 + 2?")])
    assert db.conn.execute("SELECT count(*) FROM queries").fetchone() == (0,)
