"""The ``pmv3-slice`` judges on the hand-made persona (tests/fixtures/personamem_v3), verdicts worked
out by hand with the Jaccard fallback (deterministic) and the hashtag overlap (exact under MiniLM
too), and the report's held-out hit / leak rate per distance bin."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.analysis.report import JudgmentRow
from core.benchmarks.personamem_v3.judge import JaccardSliceJudge, SliceJudge, reply_text
from core.benchmarks.personamem_v3.report import slice_table
from core.formats import load_path
from core.history.build import build_context
from core.judges.base import JudgeInput
from core.methods import plan
from core.model import Query

BACKEND = Path(__file__).parents[3] / "fixtures" / "personamem_v3" / "backend"


@pytest.fixture(scope="module")
def bundle():
    return load_path(BACKEND).bundles[0]


def judged(judge, bundle, query: Query | str, reply: str) -> dict[str, float | None]:
    q = bundle.query(query) if isinstance(query, str) else query
    p = plan("personamem-v3", build_context(bundle, query=q.id, config="full"), q) if isinstance(query, str) else None
    item = JudgeInput(bundle, q, None, p, reply, "demo:generic")  # type: ignore[arg-type]
    out = asyncio.run(judge.judge(item, None))  # type: ignore[arg-type]
    return {j.dimension: j.score for j in out} | {"_extra": out[0].extra, "_error": out[0].error}  # type: ignore[dict-item]


def test_the_reply_is_read_from_its_json_block():
    block = '```json\n{"response": "Try the ridge loop.", "reasoning": "likes jazz"}\n```'
    assert reply_text(block) == "Try the ridge loop."
    assert reply_text('{"response": "plain object"}') == "plain object"
    assert reply_text("no json here") == "no json here"


def test_personalised_answer_worked_by_hand(bundle):
    # response tokens {try, sunrise, trail, loop, then, bake, sourdough} ("likes jazz" is in the reasoning: not scored)
    # TARGET: held-out trail running (#TrailRunning -> "trail" met: 1.0 hit), sourdough (#sourdough: 1.0 hit),
    #         jazz (no tag met; Jaccard {loves, live, jazz, music} vs response = 0: miss)
    # AVOID: sushi x2 (#Sushi not met; Jaccard 0) -> no leak
    reply = '```json\n{"response": "Try a sunrise trail loop, then bake sourdough.", "reasoning": "likes jazz"}\n```'
    s = judged(JaccardSliceJudge(), bundle, "7-q1", reply)
    assert (s["held_out_hit"], s["held_out_score"]) == (1.0, 1.0)
    assert s["target_match_recall"] == pytest.approx(2 / 3) and s["target_secondary_match"] == 0.5
    assert (s["avoid_leak_rate"], s["avoid_leak_flag"], s["carve_out_respect"]) == (0.0, 0.0, 1.0)
    assert "held_back" not in s  # not a restraint query
    assert s["_extra"]["distance_bin"] == "[1024-2048)" and s["_extra"]["semantic"] == "token-jaccard"


def test_restraint_answers_worked_by_hand(bundle):
    # q2's frozen slice: TARGET [jazz #jazz], AVOID [sushi #Sushi]
    # "Since you love jazz, try the sushi bar with live jazz." -> jazz met (hit), sushi met (leak 1/1)
    s = judged(JaccardSliceJudge(), bundle, "7-q2", "Since you love jazz, try the sushi bar with live jazz.")
    assert (s["held_out_hit"], s["avoid_leak_rate"], s["avoid_leak_flag"], s["held_back"]) == (1.0, 1.0, 1.0, 0.0)
    # a generic answer: no tag met, Jaccard 0 with both items -> held back
    s = judged(JaccardSliceJudge(), bundle, "7-q2", "A quiet bistro with a set menu works well for groups.")
    assert (s["held_out_hit"], s["avoid_leak_flag"], s["held_back"]) == (0.0, 0.0, 1.0)


def test_carve_out_worked_by_hand(bundle):
    # q3: action asked_not_to_personalize, query "Please stop suggesting jazz events to me.", hashtags [#jazz]
    # "Noted: no more jazz events." -> "jazz" meets #jazz: similarity 1.0 >= 0.5 -> carve_out_respect 0
    assert judged(JaccardSliceJudge(), bundle, "7-q3", "Noted: no more jazz events.")["carve_out_respect"] == 0.0
    # "Understood." -> overlap 0; Jaccard({please, stop, suggesting, jazz, events}, {understood}) = 0 -> 1
    assert judged(JaccardSliceJudge(), bundle, "7-q3", "Understood.")["carve_out_respect"] == 1.0


def test_minilm_judge_scores_a_met_hashtag_as_one(bundle):
    s = judged(SliceJudge(), bundle, "7-q1", "Go for a trail run at sunrise.")
    assert s["held_out_score"] == 1.0 and s["_extra"]["semantic"].startswith("all-MiniLM-L6-v2@")


def test_a_query_of_another_benchmark_gets_no_score(bundle):
    other = Query(id="x", kind="open", text="Hello?")
    s = judged(JaccardSliceJudge(), bundle, other, "Hi")
    assert s["held_out_hit"] is None and "no gt_slice" in str(s["_error"])


def row(dimension: str, score: float, response: str, bin_: str) -> JudgmentRow:
    return JudgmentRow(
        kind="pmv3-slice",
        dimension=dimension,
        score=score,
        parse_ok=True,
        judge_model="metric:pmv3-slice@x",
        prompt_version="v",
        heuristic=False,
        human=False,
        is_demo=True,
        scale_min=0.0,
        scale_max=1.0,
        extra={"distance_bin": bin_},
        factors=(),
        response_id=response,
    )


def test_report_hit_and_leak_per_distance_bin():
    rows = [
        *(row("held_out_hit", 1, "a", "[0-1024)"), row("avoid_leak_flag", 0, "a", "[0-1024)")),
        *(row("held_out_hit", 0, "b", "[0-1024)"), row("avoid_leak_flag", 1, "b", "[0-1024)")),
        *(row("held_out_hit", 1, "c", "n/a"), row("avoid_leak_flag", 1, "c", "n/a")),
        *(row("held_out_hit", 1, "d", "[2048-3072)"),),
        *(row("held_out_hit", 0, "e", "[10240-11264)"),),
    ]
    table = slice_table(rows, [])
    got = [(r["distance_bin"], r["n"], r["held_out_hit"], r["avoid_leak_flag"]) for r in table.as_dicts()]
    # bins by their lower bound (10240 after 2048, not as text); [0-1024): a, b -> hit 1/2, flag 1/2;
    # [2048-3072): d -> hit 1, no flag; [10240-11264): e -> hit 0; n/a last: c; all: 5 answers,
    # hit 3/5, flag 2/3 (d and e have no flag)
    assert got == [
        ("[0-1024)", 2, 0.5, 0.5),
        ("[2048-3072)", 1, 1.0, None),
        ("[10240-11264)", 1, 0.0, None),
        ("n/a", 1, 1.0, 1.0),
        ("all", 5, 0.6, pytest.approx(2 / 3)),
    ]
