"""Store -> load gives back exactly what was imported."""

from __future__ import annotations

import pytest

from core.formats import load_path
from core.formats.native import dump_bundle, dump_filler
from core.model import Attribute, LifeEvent, Preference, Query, Session, Turn, User
from storage.db import open_db
from storage.fillers import UnknownPool, list_filler_pools, load_filler_pool, load_filler_pools
from storage.rows import STORED_FIELDS, assemble
from storage.users import UnknownUser, list_users, load_user, save_import
from tests.conftest import SAMPLE_DATA, dataset
from tests.storage.bundles import filler_pool, import_result, minimal_bundle, rich_bundle


@pytest.fixture
def db(tmp_path):
    database = open_db(tmp_path / "rt.db")
    yield database
    database.close()


def test_rich_bundle_round_trips_exactly(db):
    bundle = rich_bundle()
    save_import(db, import_result(bundle))
    loaded = load_user(db, "alex")
    assert loaded == bundle
    assert dump_bundle(loaded) == dump_bundle(bundle)
    # what later stages rely on
    assert loaded.gold_evidence(loaded.query("q1"), 4) == ["s-pref-4a"]
    assert loaded.turn("s-task#2").content.startswith("Use APA")
    assert loaded.preference("p1").evidence == {1: ["s-pref-1"], 4: ["s-pref-4a"]}


def test_minimal_bundle_and_filler_pools_round_trip(db):
    pools = [filler_pool("pool-b", 3), filler_pool("pool-a", 5)]
    save_import(db, import_result(minimal_bundle("m"), fillers=tuple(pools)))
    assert load_user(db, "m") == minimal_bundle("m")
    assert load_filler_pool(db, "pool-a") == pools[1]
    assert load_filler_pools(db) == [pools[1], pools[0]]  # ordered by id
    assert dump_filler(load_filler_pool(db, "pool-b")) == dump_filler(pools[0])
    assert [(p.id, p.sessions) for p in list_filler_pools(db)] == [("pool-a", 5), ("pool-b", 3)]


def test_every_model_field_is_stored():
    """A field added to core.model needs a column (a new migration) before storage can keep it."""
    for model, fields in STORED_FIELDS.items():
        assert set(model.model_fields) == fields, f"{model.__name__}: update storage/rows.py and add a migration"


def test_assembled_objects_behave_like_validated_ones():
    values = {"role": "user", "content": "hi", "source_id": None}
    built = assemble(Turn, dict(values))
    validated = Turn(**values)
    assert built == validated
    assert built.model_dump() == validated.model_dump()
    assert built.model_copy(update={"content": "x"}).content == "x"
    built.content = "changed"  # plain attribute assignment still works
    assert built.content == "changed" and "content" in built.model_fields_set
    for model in (User, Session, Preference, Query, Attribute, LifeEvent):
        assert model.model_config.get("extra") == "forbid"  # assemble sets no extras


def test_list_users_counts(db):
    save_import(db, import_result(rich_bundle("b-user"), minimal_bundle("a-user")))
    users = list_users(db)
    assert [u.id for u in users] == ["a-user", "b-user"]
    a, b = users
    assert (a.sessions, a.preferences, a.queries, a.attributes, a.chars) == (1, 0, 0, 0, 5)
    bundle = rich_bundle("b-user")
    assert (b.sessions, b.preferences, b.queries, b.attributes) == (7, 3, 5, 2)
    assert b.chars == sum(len(t.content) for s in bundle.sessions for t in s.turns)
    assert (b.name, b.source, b.format) == ("Alex Martin", "sample", "native")


def test_unknown_ids_raise_clear_errors(db):
    with pytest.raises(UnknownUser, match="no user 'nobody'"):
        load_user(db, "nobody")
    with pytest.raises(UnknownPool):
        load_filler_pool(db, "nothing")


def test_sample_data_round_trips(db):
    files = sorted(SAMPLE_DATA.rglob("*.json"))
    if not files:
        pytest.skip("sample_data/ holds no native files yet")
    result = load_path(SAMPLE_DATA, format="native")
    save_import(db, result)
    for bundle in result.bundles:
        assert load_user(db, bundle.user.id) == bundle
    for pool in result.fillers:
        assert load_filler_pool(db, pool.id) == pool


@pytest.mark.parametrize("name, parts", [("prefeval", ("prefeval",)), ("locomo", ("locomo", "locomo10_conv-30.json"))])
def test_real_datasets_round_trip(db, name, parts):
    path = dataset(*parts)
    try:
        result = load_path(path, format=name)
    except ModuleNotFoundError:
        pytest.skip(f"the {name} importer is not built yet")
    save_import(db, result)
    assert len(list_users(db)) == len(result.bundles) > 0
    for bundle in result.bundles:
        assert load_user(db, bundle.user.id) == bundle
    for pool in result.fillers:
        assert load_filler_pool(db, pool.id) == pool
