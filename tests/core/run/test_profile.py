"""A benchmark's profile as a run's defaults (core.run.profile): an option given wins, a profile
field fills what was not given, prefscope's defaults the rest; an LLM judge kind needs a
configured judge model, else the heuristic stands in and the note says why."""

from __future__ import annotations

import pytest

from core import benchmark as benchmarks
from core.benchmark import Benchmark, Profile
from core.plan import Message, PromptPlan, PromptStep
from core.run.profile import (
    DEFAULT_CONTEXT,
    DEFAULT_METHOD,
    Choice,
    UnknownProfile,
    choose,
    judge_model,
    noted,
    profile_names,
    resolve,
    takes_turns,
)

DEFAULTS = Choice(DEFAULT_CONTEXT, None, DEFAULT_METHOD, ("demo:heuristic",))


def bench(**profile) -> Benchmark:
    return Benchmark(name="b", title="Bee", citation="", profile=Profile(**profile))


def test_prefeval_users_start_from_its_protocol_five_inter_turns_zero_shot():
    prefeval = benchmarks.find("prefeval")
    assert prefeval is not None and benchmarks.for_source("prefeval") is prefeval
    # benchmark_generation.py --inter_turns defaults to 5 (../shared/reference/prefeval/PROTOCOL.md §3)
    assert prefeval.profile == Profile(
        context="prefeval-turns", method="prefeval-zero-shot", judge="taxonomy", factors=("turns", "model"), turns=5
    )
    got = resolve(Choice(), prefeval, DEFAULTS, "demo:heuristic")
    assert (got.context, got.turns, got.method, got.judges) == (
        "prefeval-turns",
        5,
        "prefeval-zero-shot",
        ("demo:heuristic",),
    )
    assert got.note() == (
        "defaults from the PrefEval profile: context prefeval-turns, turns 5, method prefeval-zero-shot, "
        "judge demo:heuristic (taxonomy needs a judge model and none is configured: set `judge` to one)"
    )


def test_without_a_profile_the_defaults_and_nothing_noted():
    got = resolve(Choice(), None, DEFAULTS, "openai:gpt-4o-mini")
    assert (got.context, got.turns, got.method, got.judges) == ("simple", None, "zero-shot", ("demo:heuristic",))
    assert got.applied == () and got.note() is None and got.as_json() is None


def test_an_option_given_wins_and_is_not_noted_as_the_profiles():
    b = bench(context="full", method="m-profile", judge="choice")
    got = resolve(Choice(method="reminder", judges=("demo:heuristic",)), b, DEFAULTS, None)
    assert (got.context, got.method, got.judges) == ("full", "reminder", ("demo:heuristic",))
    assert got.from_profile == {"context": "full"}
    assert got.as_json() == {"name": "b", "title": "Bee", "applied": {"context": "full"}, "reasons": []}
    everything = resolve(Choice("simple", None, "zero-shot", ("choice",)), b, DEFAULTS, None)
    assert everything.applied == () and everything.note() is None


def test_a_field_the_profile_leaves_out_keeps_prefscopes_default():
    got = resolve(Choice(), bench(method="locomo-qa", judge="locomo"), DEFAULTS, None)
    assert (got.context, got.method, got.judges) == ("simple", "locomo-qa", ("locomo",))
    assert got.from_profile == {"method": "locomo-qa", "judge": "locomo"}


@pytest.mark.parametrize(
    ("setting", "judge", "reason"),
    [
        ("openai:gpt-4o-mini", "taxonomy:openai:gpt-4o-mini", None),
        ("rubric:anthropic:claude-x", "taxonomy:anthropic:claude-x", None),  # a kind, then the model
        ("demo:heuristic", "demo:heuristic", "taxonomy needs a judge model"),
        (None, "demo:heuristic", "taxonomy needs a judge model"),
        ("choice", "demo:heuristic", "taxonomy needs a judge model"),
    ],
)
def test_an_llm_judge_kind_needs_a_configured_judge_model(setting, judge, reason):
    got = resolve(Choice(), bench(judge="taxonomy"), DEFAULTS, setting)
    assert got.judges == (judge,) and got.from_profile == {"judge": judge}
    assert (reason in got.reasons[0]) if reason else got.reasons == ()


def test_judges_that_call_no_model_apply_as_they_are_and_pairwise_is_no_runs_judge():
    for kind in ("locomo", "choice"):
        assert resolve(Choice(), bench(judge=kind), DEFAULTS, "openai:gpt-4o-mini").judges == (kind,)
    pairwise = resolve(Choice(), bench(method="np", judge="pairwise"), DEFAULTS, "openai:gpt-4o-mini")
    assert pairwise.judges == ("demo:heuristic",) and pairwise.from_profile == {"method": "np"}
    assert "compares two answers" in pairwise.reasons[0]


def test_turns_go_only_with_a_context_that_takes_them():
    b = bench(context="prefeval-turns", turns=3)
    assert resolve(Choice(), b, DEFAULTS, None).turns == 3
    assert resolve(Choice(context="simple"), b, DEFAULTS, None).turns is None
    assert resolve(Choice(context="turns"), b, DEFAULTS, None).from_profile == {"turns": 3}  # an alias
    assert resolve(Choice(turns=7), b, DEFAULTS, None).turns == 7
    assert takes_turns("prefeval-turns") and takes_turns("prefeval_turns")
    assert not takes_turns("simple") and not takes_turns("no-such-context")


def test_choosing_a_profile_by_user_by_name_or_none():
    assert choose(None, "locomo").name == "locomo"
    assert choose(None, "sample") is None and choose(None, None) is None
    assert choose("PrefEval", "locomo").name == "prefeval"
    assert choose("none", "locomo") is None and choose(" NONE ", "prefeval") is None
    with pytest.raises(UnknownProfile, match="unknown profile 'nope'; expected one of realpref, .*, none"):
        choose("nope", "locomo")
    assert profile_names()[-1] == "none" and "personamem" in profile_names()


@pytest.mark.parametrize(
    ("setting", "model"),
    [
        ("openai:gpt-4o-mini", "openai:gpt-4o-mini"),
        ("rubric:openai:gpt-4o-mini", "openai:gpt-4o-mini"),
        ("taxonomy:ollama:qwen3", "ollama:qwen3"),
        ("rubric", None),
        ("demo:heuristic", None),
        ("heuristic", None),
        ("choice", None),
        ("locomo", None),
        ("", None),
        (None, None),
    ],
)
def test_which_judge_settings_name_a_judge_model(setting, model):
    assert judge_model(setting) == model


def test_the_note_goes_first_in_the_plan_and_a_plan_without_one_is_left_alone():
    plan = PromptPlan(method="m", steps=[PromptStep(name="a", messages=[Message(role="user", content="q")])])
    plan.notes.append("built")
    nothing = resolve(Choice(), None, DEFAULTS, None)
    assert noted(plan, nothing) is plan
    got = noted(plan, resolve(Choice(), bench(method="m2"), DEFAULTS, None), "hint")
    assert got.notes == ["defaults from the Bee profile: method m2; hint", "built"] and plan.notes == ["built"]


def test_listing_a_profile_names_turns_only_where_set():
    assert "turns" not in Profile(method="m").as_dict()
    assert Profile(context="prefeval-turns", turns=5).as_dict()["turns"] == 5


def test_a_pickers_values_round_trip_and_no_judge_is_a_choice():
    got = resolve(Choice.of({"method": "reminder", "judge": ""}), bench(method="m", judge="choice"), DEFAULTS, None)
    assert got.values() == {"context": "simple", "turns": None, "method": "reminder", "judge": ""}
    assert got.applied == () and Choice.of({}) == Choice()
