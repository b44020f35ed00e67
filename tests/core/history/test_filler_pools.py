"""Which filler pools a context draws from: the spec's, else the user's own source's pool."""

from __future__ import annotations

import pytest

from core.history.filler import UnknownFillerPool, default_pool_ids, select_pools
from core.history.prefeval_turns import POOL_ID
from core.model import FillerPool, Session, Turn


def pool(pool_id: str, source: str) -> FillerPool:
    turns = [Turn(role="user", content="hi"), Turn(role="assistant", content="hello")]
    return FillerPool(id=pool_id, source=source, sessions=[Session(id=f"{pool_id}-1", kind="filler", turns=turns)])


POOLS = [
    pool("sample-everyday", "sample"),
    pool(POOL_ID, "prefeval"),
    pool("zz-native", "native"),
    pool("aa-other", "otherbench"),
]


@pytest.mark.parametrize(
    "source,expected",
    [
        ("sample", ["sample-everyday"]),  # the sample users: the sample pool only
        ("prefeval", [POOL_ID]),  # PrefEval users: PrefEval's inter turns
        ("native", ["zz-native"]),  # a pool of the user's own source wins
        ("locomo", ["sample-everyday", "zz-native"]),  # no pool of its own: the sample / native ones
    ],
)
def test_default_is_the_users_own_source(source, expected):
    assert default_pool_ids(source, POOLS) == expected


def test_default_never_takes_every_pool():
    assert "aa-other" not in default_pool_ids("locomo", POOLS)
    assert default_pool_ids("sample", POOLS) == default_pool_ids("sample", POOLS[:1])


def test_prefeval_turns_takes_prefevals_pool_for_anyone():
    assert default_pool_ids("sample", POOLS, "prefeval-turns") == [POOL_ID]
    assert select_pools(None, "sample", POOLS[:1], "prefeval-turns") == []  # build says how to import it


def test_named_pools_are_taken_in_id_order():
    got = select_pools(["zz-native", "aa-other"], "sample", POOLS, "normal")
    assert [p.id for p in got] == ["aa-other", "zz-native"]


def test_unknown_pool_names_the_known_ones():
    with pytest.raises(UnknownFillerPool) as err:
        select_pools(["nope", "sample-everyday"], "sample", POOLS, "normal")
    message = str(err.value)
    assert "no filler pool 'nope'" in message
    assert "known pools: aa-other, prefeval-inter-turns, sample-everyday, zz-native" in message
    with pytest.raises(UnknownFillerPool, match="known pools: none"):
        select_pools(["nope"], "sample", [], "simple")
