"""PrefEval records that repeat another's text stay separate users (task i is record i), noted."""

from __future__ import annotations

from core.formats import load_path
from tests.conftest import dataset
from tests.core.formats.builders import TOPIC, prefeval_files, write_tree


def test_real_repeated_preference_is_two_users_and_noted():
    result = load_path(dataset("prefeval"))
    ids = {b.user.id: b for b in result.bundles}
    a, b = ids["prefeval-travel_restaurant-019"], ids["prefeval-travel_restaurant-024"]
    assert a.preferences[0].text == b.preferences[0].text == "I avoid street food due to hygiene concerns."
    assert a.queries[0].text != b.queries[0].text
    assert any("records 19, 24 share the preference" in n for n in result.notes)


def test_identical_records_are_kept_and_reported(tmp_path):
    files = prefeval_files()
    for rel in files:
        if rel.startswith(("explicit", "implicit", "mcq")):
            files[rel][1] = dict(files[rel][0])
    result = load_path(write_tree(tmp_path, files))
    assert [b.user.id for b in result.bundles] == [f"prefeval-{TOPIC}-000", f"prefeval-{TOPIC}-001"]
    notes = "\n".join(result.notes)
    assert "records 0, 1 share the preference" in notes and "records 0, 1 share the question" in notes
