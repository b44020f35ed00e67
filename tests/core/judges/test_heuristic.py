"""The offline demo:heuristic judge: deterministic, labelled, and directionally sane on a sample user."""

from __future__ import annotations

from core.judges.aggregate import only, summarize
from core.judges.heuristic import HeuristicJudge, score_heuristic
from tests.core.judges.conftest import item_for
from tests.core.judges.scripted import ScriptedJudgeModel

ALIGNED = """Given that you prefer live conversations to recorded updates, I'd skip Loom videos entirely. Set it up like this:
- Twice-weekly 20-minute live calls with the Bengaluru and Pune leads, where you can interrupt and ask questions.
- After each call, send written notes in bullet points and ask for written confirmation of any scope change.
- Keep a shared doc for the diary-study schedule."""
VIOLATING = """For a team split across cities, async video works best:
- Record a short Loom walkthrough each Friday summarising the diary entries.
- Share recorded screen-share readouts the team can watch at their own pace.
- Use voice notes on WhatsApp for quick updates."""


def _no_calls(spec, messages):
    raise AssertionError("the heuristic judge never calls a model")


async def test_aligned_answer_beats_violating_answer(priya):
    judge = HeuristicJudge()
    model = ScriptedJudgeModel(_no_calls)
    good = {j.dimension: j for j in await judge.judge(item_for(priya, "p1-open", ALIGNED), model)}
    bad = {j.dimension: j for j in await judge.judge(item_for(priya, "p1-open", VIOLATING), model)}
    assert good["alignment"].score > bad["alignment"].score
    assert good["awareness"].score > bad["awareness"].score
    assert bad["alignment"].score <= 2
    assert "loom" in bad["alignment"].rationale.lower() and "rules out" in bad["alignment"].rationale
    assert "live calls" in good["alignment"].rationale and "no conflicting option" in good["alignment"].rationale


async def test_labelled_heuristic_and_deterministic(priya):
    judge = HeuristicJudge()
    first = await judge.judge(item_for(priya, "p1-open", ALIGNED), ScriptedJudgeModel(_no_calls))
    second = await judge.judge(item_for(priya, "p1-open", ALIGNED), ScriptedJudgeModel(_no_calls))
    assert first == second
    assert all(j.heuristic and j.judge_model == "demo:heuristic" and j.parse_ok for j in first)
    assert [j.dimension for j in first] == ["awareness", "alignment", "quality"]


def test_negated_mentions_count_as_awareness_not_violation():
    pref = "Avoids seafood; prefers hearty vegetable stews."
    scores = score_heuristic(
        pref, "What should I cook tonight?", "Skip the seafood tonight and make a hearty vegetable stew."
    )
    assert scores["alignment"][0] >= 4
    assert "steers away from 'seafood'" in scores["awareness"][1]


def test_generic_answer_is_middling_and_an_apology_caps_quality():
    pref = "Prefers sleeper trains over flights for trips inside India."
    generic = score_heuristic(
        pref, "How should I get to Goa?", "There are many ways to travel; pick what suits you best."
    )
    assert generic["awareness"][0] == 1 and generic["alignment"][0] == 3
    sorry = score_heuristic(pref, "How should I get to Goa?", "I'm sorry, I don't remember your preferences. " * 20)
    assert sorry["quality"][0] <= 2


async def test_heuristic_never_enters_llm_aggregates(priya):
    heur = await HeuristicJudge().judge(item_for(priya, "p1-open", ALIGNED), ScriptedJudgeModel(_no_calls))
    assert only(heur, "llm") == []
    assert summarize(heur) == []
    assert {g.dimension for g in summarize(heur, source="heuristic")} == {"awareness", "alignment", "quality"}
