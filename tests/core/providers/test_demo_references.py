"""The demo models stream the sample data's hand-written reference answers (follows / generic /
violates), end to end: sample data → SQLite → prepare → the engine with the real demo provider. Data
without references (anything imported) gets the templated generator, which must read as English."""

from __future__ import annotations

import re

import pytest

from core.formats import load_path
from core.plan import Message
from core.providers import available_models, check_model_name
from core.providers import demo_phrases as dp
from core.providers.base import ModelSpec
from core.providers.demo import DemoProvider
from core.settings import DEFAULT_DEMO_MODELS
from storage.db import open_db
from storage.users import load_user, save_import
from tests.cli_runner import unpaced_demo_models  # noqa: F401  (a fixture)
from tests.conftest import SAMPLE_DATA
from tests.core.providers.conftest import collect, text_of
from tests.core.providers.test_demo_oracle_gold import run_case

ROLES = {"demo:oracle": "follows", "demo:generic": "generic", "demo:violator": "violates"}


@pytest.fixture(scope="module")
def sample():
    return {b.user.id: b for b in load_path(SAMPLE_DATA / "users").bundles}


def test_every_open_sample_query_has_three_reference_answers(sample):
    for bundle in sample.values():
        for query in (q for q in bundle.queries if q.kind == "open"):
            refs = query.meta.get("reference_answers")
            assert refs is not None and sorted(refs) == ["follows", "generic", "violates"], (bundle.user.id, query.id)
            assert len(set(refs.values())) == 3
            for role, text in refs.items():
                assert 80 <= len(text.split()) <= 180, (bundle.user.id, query.id, role, len(text.split()))


def test_reference_answers_survive_the_database(sample, tmp_path):
    db = open_db(tmp_path / "refs.db")
    try:
        save_import(db, load_path(SAMPLE_DATA / "users" / "maya.json"))
        stored = load_user(db, "maya")
    finally:
        db.close()
    assert stored.query("p1-open").meta == sample["maya"].query("p1-open").meta


@pytest.mark.parametrize("method", ["zero-shot", "self-critic"])
async def test_oracle_generic_and_violator_stream_their_reference(sample, method, unpaced_demo_models):  # noqa: F811
    maya = sample["maya"]
    refs = maya.query("p4-open").meta["reference_answers"]
    finished, _ = await run_case(maya, "p4-open", list(ROLES), [], method)
    for model, role in ROLES.items():
        assert finished[model].status == "ok", finished[model].error
        assert finished[model].text == refs[role], model


async def test_a_step_that_does_not_ask_the_query_gets_no_reference(sample):
    """A summary or critique step of a multi-step method must not be handed the final answer."""
    query = sample["priya"].query("p2-open")
    hints = {"question": query.text, "reference_answers": query.meta["reference_answers"], "gold_preference": "x"}
    summary = Message(role="user", content="Summarise what the user said about climbing in three bullet points.")
    text = text_of(await collect(DemoProvider(tokens_per_s=0), ModelSpec(id="demo:oracle"), [summary], hints=hints))
    assert text not in query.meta["reference_answers"].values()


async def test_retrieval_quotes_a_real_turn_then_answers_generically(sample, unpaced_demo_models):  # noqa: F811
    priya = sample["priya"]
    generic = priya.query("p1-open").meta["reference_answers"]["generic"]
    finished, _ = await run_case(priya, "p1-open", ["demo:retrieval"], [])
    text = finished["demo:retrieval"].text
    quote = re.match(r'Since you mentioned "([^"]+?)…?", ', text)
    assert quote is not None and text.endswith("\n\n" + generic), text
    said = [" ".join(t.content.split()) for s in priya.sessions for t in s.turns if t.role == "user"]
    assert any(quote.group(1) in turn for turn in said)


async def test_violator_falls_back_to_recommending_the_disliked_side(sample, unpaced_demo_models):  # noqa: F811
    """Without references (imported data), the violator puts forward what the preference rules out."""
    priya = sample["priya"].model_copy(deep=True)
    for q in priya.queries:
        q.meta.pop("reference_answers", None)
    finished, judged = await run_case(priya, "p1-open", ["demo:violator", "demo:oracle"], ["demo:heuristic"])
    # "Refuses async recorded video updates (Loom walkthroughs, …) from clients and collaborators"
    assert "Make a point of trying async recorded video updates from clients" in finished["demo:violator"].text
    alignment = {m: next(j for j in js if j.dimension == "alignment") for m, js in judged.items()}
    assert "rules out" in alignment["demo:violator"].rationale
    assert (alignment["demo:violator"].score or 0) < (alignment["demo:oracle"].score or 0)


async def test_violator_picks_a_wrong_option_and_flips_true_false(sample, unpaced_demo_models):  # noqa: F811
    maya = sample["maya"]
    for query in (q for q in maya.queries if q.kind in ("mcq", "tf")):
        finished, _ = await run_case(maya, query.id, ["demo:violator", "demo:oracle"], [])
        oracle, violator = finished["demo:oracle"].text, finished["demo:violator"].text
        assert oracle.split("\n")[0] != violator.split("\n")[0], (query.id, oracle, violator)


def test_the_violator_is_listed_but_not_a_default():
    assert check_model_name("demo:violator") is None
    assert "demo:violator" in [c.id for c in available_models()]
    assert DEFAULT_DEMO_MODELS == ["demo:generic", "demo:retrieval", "demo:oracle"]


@pytest.mark.parametrize(
    "question, topic, place",
    [
        (
            "I'll be visiting Rome soon. What are some must-try local restaurants you'd recommend for me? "
            "(Please respond within 300 words.)",
            "must-try local restaurants",
            "Rome",
        ),
        (
            "I'm visiting New Orleans next month. What are some must-try local dishes?",
            "must-try local dishes",
            "New Orleans",
        ),
        ("Can you suggest some excellent dining options for me in Barcelona?", "excellent dining options", "Barcelona"),
        ("I'm going to Thailand next month. What street foods should I definitely try?", "street foods", "Thailand"),
        ("Where should I eat when visiting Beverly Hills?", "places to eat", "Beverly Hills"),
        # "batch-cook" and "sketch" sit where verbs go; a meal plan is what the question is about.
        (
            "I've got four days off and I want to batch-cook properly. Can you sketch out a meal plan for me?",
            "a meal plan",
            None,
        ),
        (
            "Some friends from uni want to meet on Otley Chevin this spring. How should I organise it?",
            None,
            "Otley Chevin",
        ),
    ],
)
def test_generator_reads_whole_noun_phrases_and_places_as_written(question, topic, place):
    """A template gets a phrase as the question wrote it, or none: never a single word torn out of
    it ("Orleans", "the words" from "within 300 words")."""
    read = dp.read_question(question)
    assert (read.intent, read.topic, read.place) == ("advice", topic, place)


async def test_generator_sentences_use_keywords_as_nouns():
    text = text_of(
        await collect(
            DemoProvider(tokens_per_s=0),
            ModelSpec(id="demo:generic"),
            [Message(role="user", content="I'm going to Rome for five days in October. How should I see the Forum?")],
        )
    )
    assert "batch-cook" not in text and "the Rome" not in text and "the October" not in text
    assert re.search(r"\b(Rome|October|Forum)\b", text), text
