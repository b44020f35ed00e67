"""LoCoMo's flat per-conversation layout (the conversation keys at the top level, as in the
``data/locomo10.zip`` its evaluation code reads) imports to the same users as ``locomo10.json``."""

from __future__ import annotations

import copy
import json

import pytest

from core.benchmarks.locomo import format as locomo
from core.formats import FormatError, detect_format, load_path
from tests.conftest import dataset
from tests.core.formats.builders import locomo_sample


def to_flat(sample: dict, *, text_key: str = "clean_text", keep_id: bool = False, image_key: str = "img_url") -> dict:
    """The flat object of one nested sample: ``conversation`` keys lifted to the top level, each
    turn's ``text`` under ``text_key`` (plus a shorter ``compressed_text``), ``sample_id`` dropped
    unless ``keep_id``, ``img_url`` renamed to ``image_key``."""
    sample = copy.deepcopy(sample)
    conv = sample.pop("conversation")
    if not keep_id:
        sample.pop("sample_id", None)
    for turns in conv.values():
        if not isinstance(turns, list):
            continue
        for turn in turns:
            text = turn.pop("text")
            turn[text_key] = text
            if text_key != "compressed_text":
                turn["compressed_text"] = " ".join(text.split()[:3])
            if "img_url" in turn:
                turn[image_key] = turn.pop("img_url")
    return {**conv, **sample}


def write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def dumps(result):
    return [b.model_dump() for b in result.bundles]


def test_flat_file_gives_the_same_bundle_as_the_nested_one(tmp_path):
    sample = locomo_sample()
    nested = write(tmp_path / "locomo10.json", [sample])
    flat = write(tmp_path / f"{sample['sample_id']}.json", to_flat(sample))
    assert detect_format(flat) == "locomo"
    a, b = load_path(nested), load_path(flat)
    assert dumps(b) == dumps(a) and b.bundles[0].user.id == "locomo-demo-1"  # the id from the file name
    assert b.notes == a.notes == []
    for side in ("a", "b"):
        assert dumps(locomo.load(flat, user_speaker=side)) == dumps(locomo.load(nested, user_speaker=side))


def test_sample_id_in_the_flat_object_wins_over_the_file_name(tmp_path):
    flat = write(tmp_path / "whatever.json", to_flat(locomo_sample(), keep_id=True))
    assert load_path(flat).bundles[0].user.id == "locomo-demo-1"
    unnamed = write(tmp_path / "conv-7.json", to_flat(locomo_sample()))
    assert load_path(unnamed).bundles[0].user.id == "locomo-conv-7"


def test_img_file_is_kept_under_its_own_name_and_the_caption_still_shows(tmp_path):
    sample = locomo_sample()
    nested = load_path(write(tmp_path / "n.json", [sample])).bundles[0]
    flat = load_path(write(tmp_path / "demo-1.json", to_flat(sample, image_key="img_file"))).bundles[0]
    assert flat.sessions[0].turns[1].content == nested.sessions[0].turns[1].content  # caption appended
    assert flat.sessions[0].meta["images"]["D1:2"] == {
        "img_file": ["https://example.invalid/porto.jpg"],
        "blip_caption": "a photo of blue tiles",
    }
    # Apart from that field name, the bundles are the same.
    flat.sessions[0].meta["images"]["D1:2"]["img_url"] = flat.sessions[0].meta["images"]["D1:2"].pop("img_file")
    assert flat.model_dump() == nested.model_dump()


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"text": "T", "clean_text": "C", "compressed_text": "Z"}, "T"),
        ({"clean_text": "C", "compressed_text": "Z"}, "C"),
        ({"compressed_text": "Z"}, "Z"),
    ],
)
def test_turn_text_order_text_then_clean_then_compressed(tmp_path, fields, expected):
    flat = to_flat(locomo_sample())
    turn = flat["session_1"][0]
    for key in ("clean_text", "compressed_text"):
        turn.pop(key)
    turn.update(fields)
    b = load_path(write(tmp_path / "demo-1.json", flat)).bundles[0]
    assert b.sessions[0].turns[0].content == expected
    assert "D1:1" not in b.sessions[0].meta.get("images", {})  # the unused alternatives are not kept


def test_folder_of_flat_files(tmp_path):
    one, two = locomo_sample(), locomo_sample()
    two["sample_id"] = "demo-2"
    two["conversation"]["speaker_a"] = "Ada"
    for turns in (two["conversation"]["session_1"], two["conversation"]["session_2"]):
        for t in turns:
            t["speaker"] = "Ada" if t["speaker"] == "Ana" else t["speaker"]
    folder = tmp_path / "locomo10"
    folder.mkdir()
    for s in (one, two):
        write(folder / f"{s['sample_id']}.json", to_flat(s))
    assert detect_format(folder) == "locomo"
    nested = load_path(write(tmp_path / "locomo10.json", [one, two]))
    assert dumps(load_path(folder)) == dumps(nested)


def _err(tmp_path, data, name="conv-9.json") -> str:
    with pytest.raises(FormatError) as info:
        load_path(write(tmp_path / name, data), format="locomo")
    return str(info.value)


def test_flat_errors_name_file_record_and_top_level_field(tmp_path):
    flat = to_flat(locomo_sample())
    flat["session_2"][1]["speaker"] = "Bob"
    assert _err(tmp_path, flat) == "conv-9.json: session_2[1].speaker: expected 'Ana' or 'Ben', got 'Bob'"
    flat = to_flat(locomo_sample())
    for key in ("clean_text", "compressed_text"):
        flat["session_1"][0].pop(key)
    assert _err(tmp_path, [flat]) == (
        "conv-9.json: record 0: session_1[0].text: required field is missing (and no clean_text or compressed_text"
        " either)"
    )
    flat = to_flat(locomo_sample())
    flat["session_1"][1]["clean_text"] = 5
    assert _err(tmp_path, flat) == "conv-9.json: session_1[1].clean_text: expected a string, got a number"
    flat = to_flat(locomo_sample())
    del flat["speaker_b"]
    assert _err(tmp_path, flat) == "conv-9.json: speaker_b: required field is missing"
    assert _err(tmp_path, {"speaker_a": "A", "speaker_b": "B", "qa": []}) == (
        "conv-9.json: expected at least one session_<N> list, found none"
    )


def test_real_conv_30_in_the_flat_layout(tmp_path):
    path = dataset("locomo", "locomo10_conv-30.json")
    (sample,) = json.loads(path.read_text(encoding="utf-8"))
    flat = write(tmp_path / "conv-30.json", to_flat(sample))
    assert detect_format(flat) == "locomo"
    a, b = load_path(path), load_path(flat)
    assert dumps(b) == dumps(a)
    assert b.bundles[0].user.id == "locomo-conv-30" and len(b.bundles[0].queries) == len(sample["qa"])
    assert dumps(locomo.load(flat, user_speaker="b")) == dumps(locomo.load(path, user_speaker="b"))
