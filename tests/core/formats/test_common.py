"""What every importer shares: auto-detection, and unreadable files (empty, bad UTF-8, too big, bad JSON)."""

from __future__ import annotations

import json

import pytest

from core.formats import FORMAT_ORDER, FormatError, detect_format, format_module, load_path
from tests.conftest import dataset
from tests.core.formats.builders import FIXTURES, locomo_sample, prefeval_files, write_tree

DATASET_FORMATS = [name for name in FORMAT_ORDER if name != "native"]
#: Formats whose files are JSON (PersonaMem's and PersonaMem-v2's questions are CSV).
JSON_FORMATS = [name for name in FORMAT_ORDER if name not in ("personamem", "personamem-v2")]


@pytest.mark.parametrize(
    "fixture, expected",
    [
        ("native_user.json", "native"),
        ("native_filler.json", "native"),
        ("cupid_small.jsonl", "cupid"),
        ("chat_openai.jsonl", "chatlog"),
        ("chat_sharegpt.json", "chatlog"),
    ],
)
def test_fixture_files_are_detected(fixture, expected):
    assert detect_format(FIXTURES / fixture) == expected


@pytest.mark.parametrize(
    "parts, expected",
    [
        (("prefeval",), "prefeval"),
        (("prefeval", "filtered_inter_turns.json"), "prefeval"),
        (("prefeval", "mcq_options", "travel_restaurant.json"), "prefeval"),
        (("locomo", "locomo10_conv-30.json"), "locomo"),
    ],
)
def test_shared_datasets_are_detected(parts, expected):
    assert detect_format(dataset(*parts)) == expected


def test_each_format_claims_only_its_own_inputs(tmp_path):
    """No detector says yes to another format's input (order would hide such overlaps)."""
    prefeval_root = write_tree(tmp_path / "pe", prefeval_files())
    locomo_file = tmp_path / "locomo.json"
    locomo_file.write_text(json.dumps([locomo_sample()]))
    inputs = {
        "native": [FIXTURES / "native_user.json", FIXTURES / "native_filler.json"],
        "prefeval": [prefeval_root, prefeval_root / "mcq_options" / "demo_topic.json"],
        "cupid": [FIXTURES / "cupid_small.jsonl"],
        "locomo": [locomo_file],
        "chatlog": [FIXTURES / "chat_openai.jsonl", FIXTURES / "chat_sharegpt.json"],
    }
    for owner, paths in inputs.items():
        for path in paths:
            claims = [name for name in FORMAT_ORDER if format_module(name).detect(path)]
            assert claims == [owner], (path, claims)


@pytest.mark.parametrize("name", FORMAT_ORDER)
@pytest.mark.parametrize("content", [b"", b"\x00\xff\xfe garbage", b'{"a": [1, 2', b"[" * 50_000, b"\xef\xbb\xbf  "])
@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".txt"])
def test_detect_never_raises_on_garbage(tmp_path, name, content, suffix):
    path = tmp_path / f"junk{suffix}"
    path.write_bytes(content)
    assert format_module(name).detect(path) is False
    assert format_module(name).detect(tmp_path / "missing.json") is False
    assert format_module(name).detect(tmp_path) is False


def test_undetectable_input_says_how_to_proceed(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"hello": "world"}')
    with pytest.raises(FormatError) as info:
        detect_format(path)
    assert (
        str(info.value)
        == "notes.json: cannot tell the format; pass --format (native, longmemeval-cleaned, longmemeval, prefeval, cupid, "
        "locomo, op-bench, personamem, personamem-v2, personamem-v3, chatlog)"
    )


# -- unreadable files: the same messages from every importer ------------------------------------
def _load(name: str, path, max_bytes: int = 10_000_000) -> str:
    with pytest.raises(FormatError) as info:
        format_module(name).load(path, max_bytes)
    return str(info.value)


@pytest.mark.parametrize("name", FORMAT_ORDER)
def test_empty_file(tmp_path, name):
    path = tmp_path / "x.json"
    path.write_text("  \n")
    assert _load(name, path) == "x.json: file is empty"


@pytest.mark.parametrize("name", FORMAT_ORDER)
def test_invalid_utf8(tmp_path, name):
    path = tmp_path / "x.json"
    path.write_bytes(b'[\n{"a": "\xff"}]')
    assert _load(name, path) == "x.json: line 2: not valid UTF-8 (byte 0xff at offset 9)"


@pytest.mark.parametrize("name", JSON_FORMATS)
def test_invalid_json(tmp_path, name):
    path = tmp_path / "x.json"
    path.write_text('[{"a": 1,}]')
    assert _load(name, path).startswith("x.json: line 1 column 10: invalid JSON")


@pytest.mark.parametrize(
    "name, fixture",
    [
        ("native", "native_user.json"),
        ("cupid", "cupid_small.jsonl"),
        ("chatlog", "chat_openai.jsonl"),
        ("chatlog", "chat_sharegpt.json"),
    ],
)
def test_file_above_the_size_limit(name, fixture):
    path = FIXTURES / fixture
    message = _load(name, path, max_bytes=200)
    assert message.startswith(f"{fixture}: file is 0.0 MB, above the 0 MB import limit")
    assert "--max-mb" in message


def test_size_limit_in_a_prefeval_folder_names_the_file_by_its_folder(tmp_path):
    root = write_tree(tmp_path, prefeval_files())
    message = _load("prefeval", root, max_bytes=600)
    assert message.startswith("implicit_preference/persona-driven/demo_topic.json: file is")


def test_size_limit_locomo(tmp_path):
    path = tmp_path / "l.json"
    path.write_text(json.dumps([locomo_sample()]))
    assert "import limit" in _load("locomo", path, max_bytes=100)


@pytest.mark.parametrize("name", [n for n in DATASET_FORMATS if n in JSON_FORMATS])
def test_absurd_nesting_is_a_format_error(tmp_path, name):
    path = tmp_path / "x.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert _load(name, path) == "x.json: JSON is nested too deeply to read"


def test_absurd_nesting_native(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert _load("native", path) == "x.json: JSON is nested too deeply to read"


@pytest.mark.parametrize(
    "name, top",
    [
        ("native", "alex.json: expected an object, got an array"),
        ("prefeval", "alex.json: expected an array, got an object"),
        ("cupid", "alex.json: record 0: persona_id: required field is missing"),
        ("locomo", "alex.json: conversation: required field is missing"),
        ("chatlog", "alex.json: expected a 'messages', 'conversations' or 'conversation' list, found none"),
    ],
)
def test_wrong_top_level_shape(tmp_path, name, top):
    path = tmp_path / "alex.json"
    # Each importer gets the other top-level kind than it expects (or a record with nothing it needs).
    body = {"native": [], "prefeval": {"x": 1}, "cupid": [{"x": 1}], "locomo": {"x": 1}, "chatlog": {"x": 1}}[name]
    path.write_text(json.dumps(body))
    assert _load(name, path) == top


def test_load_path_reports_a_missing_path(tmp_path):
    with pytest.raises(FormatError, match=r"no such file or folder$"):
        load_path(tmp_path / "nope.json")


def test_detect_format_takes_a_string_path_as_load_path_does():
    assert detect_format(str(FIXTURES / "native_user.json")) == "native"
