"""Generated restraint probes (issue 38, item 2): for a stored user of any benchmark, a question the
user's preference should not change, one per preference the user's queries bear; neutral by
construction (no content word shared with the preference or the query it stands beside), chosen
deterministically, idempotent by id."""

from __future__ import annotations

from core.analysis import restraint_probes as rp
from core.formats import load_path
from core.judges.common import gold_preference
from core.model import RESTRAINT, UserBundle
from core.text.words import content_stems
from tests.conftest import REPO

SAMPLE = REPO / "sample_data" / "users"


def sample(name: str) -> UserBundle:
    return load_path(SAMPLE / f"{name}.json", format="native").bundles[0]


def with_queries(bundle: UserBundle, queries) -> UserBundle:
    return UserBundle.model_validate({**bundle.model_dump(), "queries": [*bundle.model_dump()["queries"], *queries]})


def test_one_probe_per_preference_beside_its_open_query():
    maya = sample("maya")
    found = rp.restraint_probes(maya)
    # four forms (open, MCQ, two TF) bear each preference: one probe per preference, beside the open one
    assert [q.id for q in found.added] == [f"{p.id}-open-restraint" for p in maya.preferences]
    for probe in found.added:
        source = maya.query(probe.meta[rp.SOURCE_QUERY])
        preference = maya.preference(source.preference_id).text
        assert probe.kind == "open" and probe.preference_id == source.preference_id
        assert probe.meta[RESTRAINT] is True and probe.meta[rp.GENERATED] is True
        assert probe.meta[rp.PREFERENCE] == preference and probe.meta[rp.BENCHMARK] == "sample"
        assert probe.text in rp.pool() and probe.answer == rp.answer_of(probe.text)
        # what the restraint judge and demo models read as "the preference to hold back"
        assert gold_preference(with_queries(maya, [probe]), probe) == preference


def test_no_probe_shares_a_content_word_with_its_preference_or_query():
    for name in ("maya", "priya", "tomasz", "dana"):
        bundle = sample(name)
        found = rp.restraint_probes(bundle)
        assert found.added, name
        for probe in found.added:
            source = bundle.query(probe.meta[rp.SOURCE_QUERY])
            taken = content_stems(probe.meta[rp.PREFERENCE]) | content_stems(source.text)
            assert not content_stems(probe.text) & taken, (name, probe.id, probe.text)


def test_the_choice_is_deterministic_and_depends_on_user_and_query():
    maya = sample("maya")
    first = rp.restraint_probes(maya).added
    assert rp.restraint_probes(sample("maya")).added == first
    texts = {q.text for q in first}
    assert len(texts) == len(first)  # one user's probes ask different questions while the pool allows
    renamed = UserBundle.model_validate({**maya.model_dump(), "user": {**maya.user.model_dump(), "id": "maya-2"}})
    assert [q.text for q in rp.restraint_probes(renamed).added] != [q.text for q in first]


def test_rerunning_adds_nothing():
    maya = sample("maya")
    first = rp.restraint_probes(maya)
    stored = with_queries(maya, [q.model_dump() for q in first.added])
    again = rp.restraint_probes(stored)
    assert again.added == () and again.kept == tuple(q.id for q in first.added)


def test_a_user_without_a_preference_gets_no_probe_and_says_why():
    qa = UserBundle.model_validate(
        {
            "user": {"id": "locomo-x", "name": "x", "source": "locomo"},
            "queries": [{"id": "qa-1", "kind": "open", "text": "When did Caroline go to the LGBTQ support group?"}],
        }
    )
    found = rp.restraint_probes(qa)
    assert found.added == () and found.kept == ()
    assert "no query bears a preference" in found.note and "nothing to hold back" in found.note


def test_a_preference_every_pool_question_touches_is_skipped_with_a_note():
    greedy = " ".join(rp.pool())
    bundle = UserBundle.model_validate(
        {
            "user": {"id": "u", "name": "u", "source": "cupid"},
            "queries": [{"id": "q1", "kind": "open", "text": "Anything?", "gold_preference": greedy}],
        }
    )
    found = rp.restraint_probes(bundle)
    assert found.added == () and "q1" in found.note and "shares a content word" in found.note


def test_the_pool_is_ours_unique_and_neutral_questions():
    questions = rp.pool()
    assert len(questions) >= 30 and len(set(questions)) == len(questions)
    assert all(q.strip() == q and q.endswith(("?", ".", '."')) for q in questions)
    assert "ours" in rp.citation().lower()
    assert all(rp.answer_of(q).strip() for q in questions)  # each has its one right answer
    assert rp.answer_of("What is 17 multiplied by 23?") == "391"


def test_a_data_query_holding_the_probe_id_is_left_alone_and_named():
    bundle = UserBundle.model_validate(
        {
            "user": {"id": "u", "source": "cupid"},
            "queries": [
                {"id": "q1", "kind": "open", "text": "Draft the memo.", "gold_preference": "Memos are short."},
                {"id": "q1-restraint", "kind": "open", "text": "Part of the data."},
            ],
        }
    )
    found = rp.restraint_probes(bundle)
    assert found.added == () and found.kept == ()
    assert "q1-restraint" in found.note and "not a probe" in found.note
