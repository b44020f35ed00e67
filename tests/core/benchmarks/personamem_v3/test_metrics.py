"""PersonaMem-v3's similarity and slice metrics (PROTOCOL.md §4.2-4.3, §5) with verdicts worked out by
hand in the comments. A table-driven ``semantic`` stands in for the embedding model where the
hand-working needs fixed numbers; the MiniLM path and the Jaccard fallback are tested on their own."""

from __future__ import annotations

import pytest

from core.benchmarks.personamem_v3.metrics import (
    distance_bin,
    hashtag_forms,
    hashtag_overlap,
    item_text,
    jaccard,
    score_response_against_slice,
    similarity,
    tokens,
)
from core.benchmarks.personamem_v3.semantic import MiniLMCosine, TokenJaccard, engine


def zero(text: str, response: str) -> float:
    return 0.0


def table(values: dict[str, float]):
    return lambda text, response: values.get(text, 0.0)


def test_tokens_keep_the_hash_and_drop_short_words():
    # [A-Za-z0-9#]+, lower-cased, length >= 3: "I" and "go" dropped, "#Hiking" keeps its '#'
    assert tokens("I go #Hiking at 6am, on Trail-42!") == {"#hiking", "6am", "trail"}
    # "42" is 2 characters: dropped; "on" and "at" too


def test_hashtag_forms_are_the_bare_tag_and_its_camel_case_parts():
    # "#TrailRunning" -> bare "trailrunning" + parts "trail", "running"
    assert hashtag_forms("#TrailRunning") == {"trailrunning", "trail", "running"}
    # "#NYCFood" -> "nycfood", "nyc", "food"; "#5kRun" -> "5krun", "run" ("5" and "k" are too short)
    assert hashtag_forms("#NYCFood") == {"nycfood", "nyc", "food"}
    assert hashtag_forms("#5kRun") == {"5krun", "run"}
    assert hashtag_forms("  #  ") == set() and hashtag_forms("#") == set()


def test_hashtag_overlap_and_its_hash_quirk():
    tags = ["#TrailRunning", "#sourdough", "", "#jazz"]
    # non-empty: 3. "trail" meets #TrailRunning, "sourdough" meets #sourdough, no jazz -> 2/3
    assert hashtag_overlap("Try the trail loop and bake sourdough", tags) == pytest.approx(2 / 3)
    # the quirk: "#sourdough" in the response is the token "#sourdough", not "sourdough" -> 0/3
    assert hashtag_overlap("Love your #sourdough and #jazz!", tags) == 0.0
    assert hashtag_overlap("anything", []) == 0.0 and hashtag_overlap("anything", ["", "#"]) == 0.0


def test_jaccard_fallback_by_hand():
    # tokens("hiking mountain trails outdoor") = {hiking, mountain, trails, outdoor}
    # tokens("I like mountain hiking") = {like, mountain, hiking}; shared 2, union 5 -> 0.4
    assert jaccard("hiking mountain trails outdoor", "I like mountain hiking") == pytest.approx(0.4)
    assert jaccard("", "") == 0.0
    assert TokenJaccard()("hiking mountain trails outdoor", "I like mountain hiking") == pytest.approx(0.4)


def test_similarity_is_the_max_of_overlap_and_semantic():
    # overlap of ["#jazz"] with "jazz tonight" = 1.0; semantic 0.3 -> 1.0
    assert similarity("jazz tonight", "x", ["#jazz"], lambda t, r: 0.3) == 1.0
    # no tag met -> the semantic 0.3
    assert similarity("rock tonight", "x", ["#jazz"], lambda t, r: 0.3) == 0.3


def test_item_text_joins_persona_item_and_category():
    assert item_text({"persona_item": "loves sourdough ", "category": "food"}) == "loves sourdough  food"
    assert item_text({"persona_item": "loves sourdough", "category": ""}) == "loves sourdough"


TARGET = [
    {"persona_item": "held-out A", "category": "c", "source_hashtags": ["#jazz"]},  # held-out
    {"persona_item": "B", "category": "c", "source_hashtags": []},
    {"persona_item": "C", "category": "c", "source_hashtags": []},
]
AVOID = [
    {"persona_item": "D", "category": "c", "source_hashtags": ["#Sushi"]},
    {"persona_item": "E", "category": "c", "source_hashtags": []},
    {"persona_item": "D", "category": "c", "source_hashtags": ["#Sushi"]},  # AVOID is not de-duplicated
    {"persona_item": "F", "category": "c", "source_hashtags": []},
]


def test_slice_scores_worked_by_hand():
    # semantic by item text: "B c" 0.6 (hit), "C c" 0.49 (miss, below 0.5), "E c" 0.5 (hit: >= 0.5)
    semantic = table({"B c": 0.6, "C c": 0.49, "E c": 0.5})
    # response "jazz and sushi": #jazz met (overlap 1.0) -> held-out 1.0 hit; #Sushi met -> D, D hit
    s = score_response_against_slice("jazz and sushi", TARGET, AVOID, semantic)
    assert s.held_out_score == 1.0 and s.held_out_hit == 1
    assert s.target_match_recall == pytest.approx(2 / 3)  # A, B of A, B, C
    assert s.target_secondary_match == pytest.approx(1 / 2)  # B of B, C
    assert s.avoid_leak_rate == pytest.approx(3 / 4)  # D, E, D of D, E, D, F
    assert s.avoid_leak_flag == 1 and s.avoid_leak_indices == (0, 1, 2)
    assert (s.num_target, s.num_avoid, s.carve_out_respect) == (3, 4, 1)


def test_slice_edges_worked_by_hand():
    # only the held-out: secondary 0; no AVOID: leak 0, flag 0
    s = score_response_against_slice("nothing", TARGET[:1], [], zero)
    assert (s.held_out_score, s.held_out_hit, s.target_match_recall, s.target_secondary_match) == (0.0, 0, 0.0, 0.0)
    assert (s.avoid_leak_rate, s.avoid_leak_flag, s.avoid_leak_indices) == (0.0, 0, ())
    # exactly at the threshold is a hit (>= 0.5)
    s = score_response_against_slice("nothing", TARGET[:1], [], table({"held-out A c": 0.5}))
    assert (s.held_out_score, s.held_out_hit, s.target_match_recall) == (0.5, 1, 1.0)
    # no TARGET at all: no held-out to score (ours: None), recall 0
    s = score_response_against_slice("nothing", [], [], zero)
    assert s.held_out_score is None and s.held_out_hit is None and s.target_match_recall == 0.0


def test_carve_out_compares_the_response_with_the_user_query():
    query = "Please stop recommending jazz"
    semantic = table({query: 0.2})
    # asked_not_to_personalize: similarity(response, query text, ["#jazz"]); "jazz" met -> 1.0 >= 0.5 -> 0
    s = score_response_against_slice(
        "More jazz!", [], [], semantic, action="asked_not_to_personalize", user_query=query, event_hashtags=["#jazz"]
    )
    assert s.carve_out_respect == 0
    # a generic reply: overlap 0, semantic 0.2 < 0.5 -> 1
    s = score_response_against_slice(
        "Sure.", [], [], semantic, action="asked_not_to_personalize", user_query=query, event_hashtags=["#jazz"]
    )
    assert s.carve_out_respect == 1
    # the comparison is with the query text: semantic(query, response) 0.8 >= 0.5 -> 0, no hashtag needed
    s = score_response_against_slice(
        "Sure.", [], [], table({query: 0.8}), action="asked_not_to_personalize", user_query=query, event_hashtags=[]
    )
    assert s.carve_out_respect == 0
    # any other action: 1 whatever the response
    s = score_response_against_slice("More jazz!", [], [], semantic, action="liked", user_query=query)
    assert s.carve_out_respect == 1


@pytest.mark.parametrize(
    "tokens_, label",
    [(-1, "n/a"), (0, "[0-1024)"), (1023, "[0-1024)"), (1024, "[1024-2048)"), (2200, "[2048-3072)"), (None, "n/a")],
)
def test_distance_bin(tokens_, label):
    assert distance_bin(tokens_) == label


def test_minilm_cosine_is_the_bundled_models_cosine():
    cos = engine("minilm")
    assert isinstance(cos, MiniLMCosine) and cos.id.startswith("all-MiniLM-L6-v2@")
    same = cos("I love mountain hiking", "I love mountain hiking")
    near = cos("loves hiking outdoors", "We could go on a mountain hike this weekend")
    far = cos("loves hiking outdoors", "The invoice total is 42 dollars")
    assert same == pytest.approx(1.0, abs=1e-4) and near > far
    with pytest.raises(ValueError, match="unknown semantic engine"):
        engine("nope")
