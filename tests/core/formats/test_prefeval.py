"""PrefEval importer: the real benchmark_dataset files, and broken copies of a small one."""

from __future__ import annotations

import json

import pytest

from core.benchmarks.prefeval import format as prefeval
from core.formats import FormatError, detect_format, load_path
from tests.conftest import dataset
from tests.core.formats.builders import PREFS, TOPIC, prefeval_files, write_tree

TOPIC_FILES = {
    "explicit": "explicit_preference/travel_restaurant.json",
    "choice": "implicit_preference/choice-based/travel_restaurant.json",
    "persona": "implicit_preference/persona-driven/travel_restaurant.json",
    "mcq": "mcq_options/travel_restaurant.json",
}


def raw(name: str) -> list[dict]:
    return json.loads(dataset("prefeval", TOPIC_FILES[name]).read_text(encoding="utf-8"))


# -- the real files --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real():
    return load_path(dataset("prefeval"))


def test_real_folder_is_detected_and_gives_56_users_and_one_filler_pool(real):
    assert detect_format(dataset("prefeval")) == "prefeval"
    assert real.format == "prefeval"
    assert len(real.bundles) == 56
    assert [b.user.id for b in real.bundles[:2]] == ["prefeval-travel_restaurant-000", "prefeval-travel_restaurant-001"]
    assert len(real.fillers) == 1 and len(real.fillers[0].sessions) == 24


def test_real_every_user_has_gold_evidence_for_types_1_to_3(real):
    for b in real.bundles:
        (pref,) = b.preferences
        assert pref.topic == "travel_restaurant" and pref.type is None
        assert sorted(pref.evidence) == [1, 2, 3]
        for expr, sids in pref.evidence.items():
            (sid,) = sids
            assert b.session(sid).expression_type == expr
            assert b.session(sid).kind == "preference"
        assert b.expression_types() == [1, 2, 3]
        open_q = b.query(f"{b.user.id}-open")
        assert b.gold_evidence(open_q, 2) == pref.evidence[2]


def test_real_sessions_follow_the_documented_mapping(real):
    explicit, choice, persona = raw("explicit"), raw("choice"), raw("persona")
    for i, b in enumerate(real.bundles):
        e = b.session(f"{b.user.id}-explicit")
        assert [(t.role, t.content) for t in e.turns] == [("user", explicit[i]["preference"])]
        c = b.session(f"{b.user.id}-choice-based")
        conv = choice[i]["conversation"]
        assert [t.content for t in c.turns] == [
            conv["query"],
            conv["assistant_options"],
            conv["user_selection"],
            conv["assistant_acknowledgment"],
        ]
        assert [t.role for t in c.turns] == ["user", "assistant", "user", "assistant"]
        assert c.meta["aligned_op"] == choice[i]["aligned_op"] and c.meta["prefeval_form"] == "choice-based"
        p = b.session(f"{b.user.id}-persona-driven")
        pairs = [persona[i]["conversation"][k] for k in sorted(persona[i]["conversation"], key=int)]
        assert [t.content for t in p.turns] == [x for pair in pairs for x in (pair["user"], pair["assistant"])]
        assert b.user.persona == persona[i]["persona"]


def test_real_reworded_preferences_are_accepted_with_a_note(real):
    # The released implicit/mcq files add words like "absolutely" to 4 preferences.
    explicit, choice = raw("explicit"), raw("choice")
    differing = [i for i in range(56) if explicit[i]["preference"] != choice[i]["preference"]]
    assert differing, "the shared data no longer has reworded records; this test needs a new case"
    assert any(f"({', '.join(map(str, differing))})" in n for n in real.notes)
    b = real.bundles[differing[0]]
    assert b.preferences[0].text == explicit[differing[0]]["preference"]
    assert b.session(f"{b.user.id}-choice-based").meta["prefeval_preference"] == choice[differing[0]]["preference"]


def test_real_mcq_answer_points_at_the_aligned_option(real):
    mcq = raw("mcq")
    letters = []
    for i, b in enumerate(real.bundles):
        q = b.query(f"{b.user.id}-mcq")
        assert sorted(q.options) == sorted(mcq[i]["classification_task_options"])
        answer_text = q.options["ABCD".index(q.answer)]
        assert answer_text == mcq[i]["classification_task_options"][0]
        assert q.options == [mcq[i]["classification_task_options"][k] for k in q.meta["option_order"]]
        letters.append(q.answer)
        # PrefEval's convention (option 0 is aligned) checked against the content itself:
        if "gluten" in mcq[i]["preference"].lower():
            assert "gluten-free" in answer_text.lower()
    assert len(set(letters)) == 4, "the shuffle should spread answers over all letters"


def test_real_choice_based_files_agree_with_the_index_0_convention():
    # The choice-based file names its aligned option; it is always the first, as in mcq_options.
    assert all(r["options"][0] == r["aligned_op"] for r in raw("choice"))


def test_real_mcq_shuffle_is_deterministic(real):
    again = load_path(dataset("prefeval"))
    assert [b.queries for b in again.bundles] == [b.queries for b in real.bundles]


def test_real_filler_pool_keeps_every_conversation():
    data = json.loads(dataset("prefeval", "filtered_inter_turns.json").read_text(encoding="utf-8"))
    result = load_path(dataset("prefeval", "filtered_inter_turns.json"))
    (pool,) = result.fillers
    assert pool.id == "prefeval-inter-turns"
    assert [s.id for s in pool.sessions] == [r["conversation_id"] for r in data]
    for s, r in zip(pool.sessions, data):
        assert s.kind == "filler"
        assert [t.content for t in s.turns] == [m["content"] for m in r["conversation"]]
        assert s.meta["model"] == r["model"]


@pytest.mark.parametrize("name", list(TOPIC_FILES))
def test_real_single_files_load_on_their_own(name):
    path = dataset("prefeval", TOPIC_FILES[name])
    assert detect_format(path) == "prefeval"
    result = load_path(path)
    assert len(result.bundles) == 56
    expected = {"explicit": [1], "persona": [2], "choice": [3], "mcq": []}[name]
    assert sorted(result.bundles[0].preferences[0].evidence) == expected


# -- small fixture: mapping details and errors -----------------------------------------------
@pytest.fixture
def tree(tmp_path):
    """The fixture's files (edit them in place) and a function writing them as a benchmark_dataset folder."""
    files = prefeval_files()
    return files, lambda: write_tree(tmp_path / "benchmark_dataset", files)


def test_fixture_folder_and_parent_folder_both_load(tree, tmp_path):
    _, write = tree
    root = write()
    for path in (root, tmp_path):  # the benchmark_dataset folder itself, or the folder above it
        result = load_path(path)
        assert [b.user.id for b in result.bundles] == [f"prefeval-{TOPIC}-000", f"prefeval-{TOPIC}-001"]
        assert result.bundles[1].preferences[0].text == PREFS[1]


def test_fixture_filler_merges_consecutive_roles_with_a_note(tree):
    _, write = tree
    result = load_path(write())
    conv_b = result.fillers[0].sessions[1]
    assert [(t.role, t.content) for t in conv_b.turns] == [("user", "Hi\n\nAre you there?"), ("assistant", "Yes.")]
    assert any("merged 1 consecutive" in n for n in result.notes)


def _err(path) -> str:
    with pytest.raises(FormatError) as info:
        load_path(path, format="prefeval")
    return str(info.value)


def test_error_different_preference_names_both_files_and_the_index(tree):
    files, write = tree
    files[f"implicit_preference/choice-based/{TOPIC}.json"][1]["preference"] = "I love loud nightlife districts."
    assert _err(write()) == (
        f"implicit_preference/choice-based/{TOPIC}.json: record 1: preference: expected the same preference as "
        f"explicit_preference/{TOPIC}.json record 1 (files are matched by index), got 'I love loud nightlife districts.'"
    )


def test_error_different_question(tree):
    files, write = tree
    files[f"mcq_options/{TOPIC}.json"][0]["question"] = "Other?"
    assert _err(write()) == (
        f"mcq_options/{TOPIC}.json: record 0: question: expected the same question as "
        f"explicit_preference/{TOPIC}.json record 0 (files are matched by index), got 'Other?'"
    )


def test_error_record_counts_differ(tree):
    files, write = tree
    files[f"mcq_options/{TOPIC}.json"].pop()
    assert _err(write()) == (
        f"mcq_options/{TOPIC}.json: has 1 records but explicit_preference/{TOPIC}.json has 2; "
        "PrefEval files of one topic are matched record by record"
    )


def test_error_wrong_types_and_missing_fields(tree):
    files, write = tree
    files[f"mcq_options/{TOPIC}.json"][1]["classification_task_options"] = "aligned"
    assert _err(write()) == (
        f"mcq_options/{TOPIC}.json: record 1: classification_task_options: expected an array, got a string"
    )
    files[f"mcq_options/{TOPIC}.json"][1]["classification_task_options"] = ["a", "b", 3]
    assert _err(write()) == (
        f"mcq_options/{TOPIC}.json: record 1: classification_task_options[2]: expected a string, got a number"
    )
    files[f"mcq_options/{TOPIC}.json"][1]["classification_task_options"] = ["a", "b"]
    del files[f"implicit_preference/persona-driven/{TOPIC}.json"][0]["conversation"]["1"]["user"]
    assert _err(write()) == (
        f"implicit_preference/persona-driven/{TOPIC}.json: record 0: conversation.1.user: required field is missing"
    )
    files[f"implicit_preference/persona-driven/{TOPIC}.json"][0]["conversation"] = {"first": {"user": "x"}}
    assert _err(write()) == (
        f"implicit_preference/persona-driven/{TOPIC}.json: record 0: conversation: "
        'expected turn numbers as keys ("0", "1", …), got \'first\''
    )


def test_error_choice_conversation_key_missing(tree):
    files, write = tree
    del files[f"implicit_preference/choice-based/{TOPIC}.json"][0]["conversation"]["user_selection"]
    assert _err(write()) == (
        f"implicit_preference/choice-based/{TOPIC}.json: record 0: "
        "conversation.user_selection: required field is missing"
    )


def test_error_top_level_not_a_list(tree):
    files, write = tree
    files[f"explicit_preference/{TOPIC}.json"] = {"records": []}  # type: ignore[assignment]
    assert _err(write()) == f"explicit_preference/{TOPIC}.json: expected an array, got an object"


def test_error_filler_duplicate_id_and_bad_content(tree):
    files, write = tree
    files["filtered_inter_turns.json"][1]["conversation_id"] = "conv-a"
    assert (
        _err(write()) == "filtered_inter_turns.json: record 1: conversation_id: duplicate id 'conv-a' (also record 0)"
    )
    files["filtered_inter_turns.json"][1]["conversation_id"] = "conv-b"
    files["filtered_inter_turns.json"][0]["conversation"][1]["content"] = None
    assert _err(write()) == "filtered_inter_turns.json: record 0: conversation[1].content: expected a string, got null"


def test_error_empty_folder(tmp_path):
    (tmp_path / "mcq_options").mkdir()
    assert _err(tmp_path).startswith(f"{tmp_path.name}: folder holds no PrefEval files")


def test_detect_says_no_to_other_shapes(tmp_path):
    other = tmp_path / "x.json"
    other.write_text(json.dumps([{"current_request": "hi", "prior_interactions": []}]))
    assert prefeval.detect(other) is False
    assert prefeval.detect(tmp_path) is False


@pytest.mark.parametrize(
    ("folder", "forms"),
    [
        ("explicit_preference", {1}),
        ("implicit_preference", {2, 3}),
        ("implicit_preference/choice-based", {3}),
    ],
)
def test_a_task_folder_imports_on_its_own(tmp_path, folder, forms):
    """`prefscope import benchmark_dataset/explicit_preference` (issue 39): the folder is detected
    and only its forms are read (it said "folder holds no PrefEval files")."""
    root = write_tree(tmp_path / "benchmark_dataset", prefeval_files())
    path = root / folder
    assert detect_format(path) == "prefeval"
    result = load_path(path)
    assert {t for b in result.bundles for t in b.expression_types()} == forms
    assert not result.fillers  # the inter-turn pool beside the task folders is not part of it
