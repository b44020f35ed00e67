"""Ids resolved in one place: the full id, a unique prefix, or (runs) a unique prefix of the random
tail; unknown and ambiguous ids are errors naming the candidates."""

from __future__ import annotations

import pytest

from storage.ids import AmbiguousId, UnknownId, resolve, resolve_query_id, short_run_ids

RUNS = [
    "run-20261125T022038-42a640d5fb56",
    "run-20261125T022038-42a6ffffffff",
    "run-20261125T030000-9c01d4aa0000",
]


def run(given):
    return resolve("run", given, RUNS, listing="prefscope runs", tails=True)


def test_full_id_prefix_and_tail_prefix_resolve():
    assert run(RUNS[0]) == RUNS[0]
    assert run("run-20261125T03") == RUNS[2]
    assert run("9c01") == RUNS[2]
    assert run("42a640") == RUNS[0]


def test_unknown_and_ambiguous_name_what_to_do():
    with pytest.raises(UnknownId, match=r"run 'run-nope' not found in the database \(see `prefscope runs`\)"):
        run("run-nope")
    with pytest.raises(AmbiguousId, match="matches run-20261125T022038-42a640d5fb56, run-20261125T022038-42a6ff"):
        run("run-20261125T0220")
    with pytest.raises(AmbiguousId):
        run("42a6")
    with pytest.raises(UnknownId):
        run("9c0")  # under four hex digits a tail matches too much to be taken alone
    with pytest.raises(UnknownId):
        run("")


def test_an_exact_id_wins_over_longer_ids_it_prefixes():
    assert resolve("user", "u1", ["u1", "u10", "u11"], listing="prefscope users") == "u1"


def test_query_ids_resolve_within_one_user():
    ids = ["p1-open", "p1-mcq", "p2-open"]
    assert resolve_query_id("maya", ids, "p1-o") == "p1-open"
    with pytest.raises(AmbiguousId, match="p1-mcq, p1-open"):
        resolve_query_id("maya", ids, "p1")
    with pytest.raises(UnknownId, match="not found for user 'maya' .*prefscope show maya"):
        resolve_query_id("maya", ids, "p9")


def test_short_ids_are_unique_and_resolve_back():
    short = short_run_ids(RUNS, RUNS)
    assert short[RUNS[2]] == "9c01d4aa"
    assert short[RUNS[0]] == "42a640d5" and short[RUNS[1]] == "42a6ffff"
    for full, s in short.items():
        assert run(s) == full
    clash = ["run-1-abcdef12aaaa", "run-2-abcdef12bbbb"]  # the first 8 tail digits collide
    assert short_run_ids(clash, clash) == {clash[0]: "abcdef12a", clash[1]: "abcdef12b"}


def test_short_run_ids_equal_the_shortest_unique_tail_prefix_among_many():
    """Against the definition, checked by brute force: random tails with forced near-collisions
    (shared prefixes up to the whole tail, a tail that is another's prefix, a tail stored twice)."""
    import random

    rng = random.Random(7)
    tails = [f"{rng.getrandbits(48):012x}" for _ in range(400)]
    tails += [t[:k] + f"{rng.getrandbits(48):012x}"[k:] for t in tails[:60] for k in (8, 9, 11)]
    tails += [tails[0][:10], tails[1]]  # a prefix of another tail, and a tail stored twice
    ids = [f"run-20261128T000000-{t}" for t in tails]

    def brute(run_id):
        tail = run_id.rsplit("-", 1)[-1]
        for n in range(min(8, len(tail)), len(tail) + 1):
            if sum(t.startswith(tail[:n]) for t in tails) == 1:
                return tail[:n]
        return run_id

    assert short_run_ids(ids, ids) == {i: brute(i) for i in ids}
    assert short_run_ids(ids, ["run-x-ffffffffffff"]) == {"run-x-ffffffffffff": "run-x-ffffffffffff"}
