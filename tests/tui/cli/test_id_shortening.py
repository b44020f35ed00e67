"""Long ids cut from the middle (:mod:`core.text.short_ids`): the distinguishing end stays, distinct
ids stay distinct, and `prefscope runs` tells imported PrefEval users apart at 160 columns."""

from __future__ import annotations

import json

import pytest

from core.text.short_ids import fitted, short_forms
from tests.cli_runner import cli

PREFEVAL = [f"prefeval-travel_restaurant-{i:03d}" for i in range(56)]


def _is_cut_of(form: str, value: str) -> bool:
    head, _, tail = form.partition("…")
    return value.startswith(head) and value.endswith(tail) and len(head) + len(tail) < len(value)


def test_a_long_id_keeps_its_first_part_and_its_distinguishing_end():
    forms = short_forms(PREFEVAL, 24)
    assert forms["prefeval-travel_restaurant-000"] == "prefeval-…restaurant-000"
    assert len(set(forms.values())) == len(PREFEVAL)
    assert short_forms(["maya", "priya"], 24) == {"maya": "maya", "priya": "priya"}  # short ids stay whole


@pytest.mark.parametrize("width", [8, 12, 20, 30])
def test_distinct_ids_get_distinct_forms_within_the_width(width):
    ids = [
        *PREFEVAL,
        *(f"prefeval-results-travel_restaurant-{i:010x}" for i in range(0, 10**6, 7919)),
        *(f"imported:single_pref_remind/travel_restaurant/mistral8x7b_travel_restaurant_{n}turn.json" for n in (2, 5)),
        "same-start-AAAA-and-the-same-long-end",  # these two differ only in the middle
        "same-start-BBBB-and-the-same-long-end",
        "locomo-conv-30",
    ]
    forms = short_forms(ids, width)
    assert len(set(forms.values())) == len(ids)
    for value, form in forms.items():
        assert form == value or (len(form) <= width and _is_cut_of(form, value)), (value, form)


def test_fitted_cuts_only_the_wide_columns_to_the_room():
    rows = [[p, "E1", f"{p}-open"] for p in PREFEVAL[:3]]
    out = fitted(rows, [0, 1, 2], 40)
    assert [r[1] for r in out] == ["E1"] * 3  # narrow: kept
    assert all(sum(map(len, r)) <= 40 for r in out) and len({r[2] for r in out}) == 3
    assert fitted(rows, [0, 2], 200) == rows  # room enough: nothing cut


def _prefeval_results(tmp_path):
    records = [
        {"preference": f"I avoid seafood {i}.", "question": f"Where should I eat {i}?", "response_to_pref": "Noted.",
         "response_to_q": "Try a steakhouse."}
        for i in range(3)
    ]  # fmt: skip
    folder = tmp_path / "results" / "remind" / "travel_restaurant"
    folder.mkdir(parents=True)
    (folder / "claude3hk_travel_restaurant_2interturn.json").write_text(json.dumps(records))
    return tmp_path / "results"


def test_runs_at_160_columns_tells_long_user_and_query_ids_apart(tmp_path, monkeypatch):
    db = str(tmp_path / "r.db")
    cli(db, "import-results", str(_prefeval_results(tmp_path)))  # users prefeval-results-travel_restaurant-<hash>
    runs = json.loads(cli(db, "runs", "--json"))
    monkeypatch.setenv("COLUMNS", "160")
    out = cli(db, "runs")
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in out.splitlines() if ln.startswith("│ run-")]
    assert len(rows) == 3 and max(map(len, out.splitlines())) <= 160
    by_run = {r["id"]: r for r in runs}
    for run_id, _, user, query, *_ in rows:
        assert _is_cut_of(user, by_run[run_id]["user_id"]) and _is_cut_of(query, by_run[run_id]["query_id"])
    assert len({r[2] for r in rows}) == 3 and len({r[3] for r in rows}) == 3  # the old cut showed one text thrice
