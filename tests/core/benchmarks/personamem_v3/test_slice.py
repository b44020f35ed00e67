"""The TARGET / AVOID slice (PROTOCOL.md §4.1) and distance_tokens (§5) on the hand-made persona
folder tests/fixtures/personamem_v3/backend/7 (T = 1700100000), worked out by hand below."""

from __future__ import annotations

import json
from pathlib import Path

from core.benchmarks.personamem_v3.events import APPS
from core.benchmarks.personamem_v3.slice import build_gt_slice, distance_tokens, frozen_slice, polarity

FOLDER = Path(__file__).parents[3] / "fixtures" / "personamem_v3" / "backend" / "7"
T = 1700100000
HELD_OUT = {"persona_item": "enjoys trail running", "category": "fitness", "source_hashtags": ["#TrailRunning"]}


def app_events() -> dict[str, list[dict]]:
    return {app: json.loads((FOLDER / f"{app}.json").read_text(encoding="utf-8")) for app in APPS}


def test_polarity_from_the_interaction_type():
    assert polarity("explicit_positive") == "positive" and polarity("implicit_negative") == "negative"
    assert polarity("neutral_view") is None and polarity("") is None


def test_slice_worked_by_hand():
    # window [T-86400, T+86400] = [1700013600, 1700186400]:
    #   ig-1 (T-200000) out; ig-2 sourdough + in; ig-3 sushi - in; ig-4 DM, no preferences
    #   fb-1 jazz (T-100000) out; fb-2 sci-fi, neutral -> no polarity, not in the slice
    #   th-1 sushi - (T+3600: after T, allowed: no time mask); th-2 sourdough + (duplicate of ig-2)
    #   cb-1 jazz + in
    # TARGET: held-out, then positives in app order (instagram, facebook, threads, chatbot), de-duplicated
    # AVOID: negatives, not de-duplicated
    s = build_gt_slice(app_events(), T, HELD_OUT)
    assert [i["persona_item"] for i in s["target"]] == [
        "enjoys trail running",
        "bakes sourdough bread",
        "loves live jazz",
    ]
    assert s["target"][0]["is_held_out"] is True and "is_held_out" not in s["target"][1]
    assert [(i["persona_item"], i["source_app"]) for i in s["avoid"]] == [
        ("dislikes sushi", "instagram"),
        ("dislikes sushi", "threads"),
    ]
    assert s["avoid"][1] == {
        "persona_item": "dislikes sushi",
        "category": "food",
        "source_hashtags": ["#Sushi"],
        "polarity": "negative",
        "source_app": "threads",
        "source_timestamp": 1700103600.0,
        "source_interaction_type": "implicit_negative",
    }


def test_a_positive_repeating_the_held_out_item_is_dropped():
    # held-out "loves live jazz": cb-1's positive "loves live jazz" is a duplicate -> TARGET = [held-out, sourdough]
    s = build_gt_slice(app_events(), T, {"persona_item": "loves live jazz", "category": "music", "source_hashtags": []})
    assert [i["persona_item"] for i in s["target"]] == ["loves live jazz", "bakes sourdough bread"]


def test_distance_worked_by_hand():
    ev = app_events()
    # time-masked (< T, DMs out): ig-1 -200000, fb-1 -100000, ig-2 -50000, ig-3 -40000, fb-2 -20000,
    # th-2 -10000, cb-1 -5000 (7 events; th-1 is after T; ig-4 is a DM)
    # #TrailRunning: only ig-1 (the DM ig-4 would be later) -> 6 events after it -> 200 x 6 = 1200
    assert distance_tokens(ev, T, ["#trailrunning"]) == 1200  # case-insensitive
    # #jazz: fb-1 and cb-1; the latest is cb-1, nothing after it -> 0
    assert distance_tokens(ev, T, ["#jazz"]) == 0
    # at T + 7200 th-1 (T+3600) is masked in too: one event after cb-1 -> 200
    assert distance_tokens(ev, T + 7200, ["#jazz"]) == 200
    # no event shares the tag -> -1; a tag is matched exactly ("jazz" without '#' is another tag)
    assert distance_tokens(ev, T, ["#pottery"]) == -1 and distance_tokens(ev, T, ["jazz"]) == -1


def test_a_frozen_slice_is_read_as_given():
    frozen = frozen_slice(
        {"TARGET": [{"persona_item": "a", "category": "c", "source_hashtags": "#x, #y"}], "avoid": ["b"]}
    )
    assert frozen == {
        "target": [{"persona_item": "a", "category": "c", "source_hashtags": ["#x", "#y"]}],
        "avoid": [{"persona_item": "b", "category": "", "source_hashtags": []}],
    }
    assert frozen_slice({"other": 1}) is None and frozen_slice(None) is None
