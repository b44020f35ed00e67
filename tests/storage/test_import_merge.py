"""PrefEval forms imported one file at a time end with all of them (per-topic merge), through the
real `prefscope import` command and SQLite; stray files are skipped; merges stay all-or-nothing."""

from __future__ import annotations

import os
import shutil

import pytest
from click.testing import CliRunner

from core.formats import load_path
from storage.db import open_db
from storage.users import MergeConflict, list_users, load_user, save_import
from tests.conftest import dataset
from tests.core.formats.builders import PREFS, TOPIC, prefeval_files, write_tree
from tui.cli import main

FORMS = [
    f"explicit_preference/{TOPIC}.json",
    f"implicit_preference/persona-driven/{TOPIC}.json",
    f"implicit_preference/choice-based/{TOPIC}.json",
    f"mcq_options/{TOPIC}.json",
]
UID = f"prefeval-{TOPIC}-000"


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def stored(uid: str = UID):
    db = open_db(os.environ["PREFSCOPE_DB"])
    try:
        return load_user(db, uid)
    finally:
        db.close()


@pytest.fixture
def tree(tmp_path):
    files = prefeval_files()
    return files, write_tree(tmp_path / "bench", files)


@pytest.mark.parametrize("order", [FORMS, FORMS[::-1], [FORMS[3], FORMS[1], FORMS[0], FORMS[2]]])
def test_one_file_at_a_time_ends_with_every_form(tree, order):
    _, root = tree
    for rel in order:
        out = cli("import", str(root / rel), "--format", "prefeval")
        assert out.exit_code == 0, out.output
    b = stored()
    assert [s.meta["prefeval_form"] for s in b.sessions] == ["explicit", "persona-driven", "choice-based"]
    assert [s.expression_type for s in b.sessions] == [1, 2, 3]
    assert [q.kind for q in b.queries] == ["open", "mcq"]
    assert b.preferences[0].text == PREFS[0]
    assert b.preferences[0].evidence == {
        1: [f"{UID}-explicit"],
        2: [f"{UID}-persona-driven"],
        3: [f"{UID}-choice-based"],
    }
    assert b.user.persona == "A retired sailor who paints watercolours"
    # the same as importing the whole folder at once
    whole = next(x for x in load_path(root).bundles if x.user.id == UID)
    assert b == whole


def test_merge_is_reported_and_keeps_the_stored_mcq_order(tree):
    files, root = tree
    out = cli("import", str(root / FORMS[3]), "--format", "prefeval")
    assert "2 users added" in out.output
    first = stored().queries[-1]
    out = cli("import", str(root / FORMS[0]), "--format", "prefeval")
    assert "2 stored users merged with this import" in out.output
    assert stored().queries[-1] == first
    # options changed: the new order wins
    files[FORMS[3]][0]["classification_task_options"] = ["aligned", "x", "y", "z"]
    write_tree(root, {FORMS[3]: files[FORMS[3]]})
    cli("import", str(root / FORMS[3]), "--format", "prefeval")
    assert sorted(stored().queries[-1].options) == ["aligned", "x", "y", "z"]
    assert len(stored().sessions) == 1


def test_reworded_preference_keeps_the_explicit_text(tree):
    files, root = tree
    files[FORMS[1]][0]["preference"] = PREFS[0].replace("only", "absolutely only")
    write_tree(root, {FORMS[1]: files[FORMS[1]]})
    cli("import", str(root / FORMS[1]), "--format", "prefeval")
    assert stored().preferences[0].text == files[FORMS[1]][0]["preference"]
    cli("import", str(root / FORMS[0]), "--format", "prefeval")
    b = stored()
    assert b.preferences[0].text == PREFS[0]
    persona = next(s for s in b.sessions if s.expression_type == 2)
    assert persona.meta["prefeval_preference"] == files[FORMS[1]][0]["preference"]
    assert "prefeval_preference" not in b.sessions[0].meta


def test_a_different_question_refuses_the_whole_import(tree, tmp_path):
    files, root = tree
    cli("import", str(root / FORMS[0]), "--format", "prefeval")
    files[FORMS[1]][1]["question"] = "Something else entirely?"
    files[FORMS[1]][1]["preference"] = PREFS[1]
    write_tree(root, {FORMS[1]: files[FORMS[1]]})
    db = open_db(os.environ["PREFSCOPE_DB"])
    try:
        before = [load_user(db, u.id) for u in list_users(db)]
        with pytest.raises(MergeConflict, match="expected the same question as the stored user"):
            save_import(db, load_path(root / FORMS[1], format="prefeval"))
        assert [load_user(db, u.id) for u in list_users(db)] == before  # record 0 was not merged either
    finally:
        db.close()


def test_other_formats_still_replace(tmp_path):
    from tests.storage.bundles import import_result, rich_bundle

    db = open_db(tmp_path / "x.db")
    try:
        save_import(db, import_result(rich_bundle("alex")))
        summary = save_import(db, import_result(rich_bundle("alex")))
        assert summary.users_replaced == ["alex"] and summary.users_merged == []
    finally:
        db.close()


def test_stray_copy_in_a_folder_is_skipped_with_a_note(tree):
    _, root = tree
    shutil.copy(root / FORMS[3], root / "mcq_options" / f"{TOPIC} copy.json")
    write_tree(root, {"mcq_options/other_topic.json": prefeval_files()[FORMS[3]]})
    result = load_path(root)
    assert all(" " not in b.user.id and "other_topic" not in b.user.id for b in result.bundles)
    assert len(result.bundles) == 2
    notes = "\n".join(result.notes)
    assert f"mcq_options/{TOPIC} copy.json: stray file" in notes and f"looks like a copy of {TOPIC}.json" in notes
    assert "mcq_options/other_topic.json: stray file: no explicit_preference/other_topic.json" in notes
    out = cli("import", str(root / "mcq_options" / f"{TOPIC} copy.json"), "--format", "prefeval")
    assert out.exit_code != 0 and "stray file" in out.output and "not a PrefEval topic name" in out.output


def test_real_forms_one_at_a_time(tmp_path):
    root = dataset("prefeval")
    rels = [
        "explicit_preference/travel_restaurant.json",
        "implicit_preference/persona-driven/travel_restaurant.json",
        "implicit_preference/choice-based/travel_restaurant.json",
        "mcq_options/travel_restaurant.json",
    ]
    for rel in rels:
        assert cli("import", str(root / rel), "--format", "prefeval").exit_code == 0
    whole = {b.user.id: b for b in load_path(root).bundles}
    db = open_db(os.environ["PREFSCOPE_DB"])
    try:
        users = list_users(db)
        assert len(users) == 56 and all(u.sessions == 3 and u.queries == 2 for u in users)
        assert all(load_user(db, u.id) == whole[u.id] for u in users)
    finally:
        db.close()
