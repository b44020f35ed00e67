"""Generic chat-log importer: OpenAI messages JSONL, ShareGPT JSON, LMSYS-style records."""

from __future__ import annotations

import json

import pytest

from core.formats import FormatError, detect_format, load_path
from tests.core.formats.builders import FIXTURES, chat_records, write_jsonl


def test_openai_jsonl_fixture():
    path = FIXTURES / "chat_openai.jsonl"
    assert detect_format(path) == "chatlog"
    result = load_path(path)
    (bundle,) = result.bundles
    assert bundle.user.id == "chat-chat_openai" and bundle.user.source == "chatlog"
    assert [s.id for s in bundle.sessions] == ["trip-1", "trip-2", "chat_openai-c0002"]
    assert all(s.kind == "life_event" for s in bundle.sessions)
    trip1, trip2, bare = bundle.sessions
    assert [t.role for t in trip1.turns] == ["user", "assistant", "user", "assistant"]  # system dropped
    # multimodal parts: the text part kept, the image dropped; the tool call and tool result dropped
    assert [(t.role, t.content) for t in trip2.turns] == [
        ("user", "What is this building?"),
        ("assistant", "That is the Belém Tower, a 16th-century fortification."),
    ]
    assert bare.turns[0].content == "Thanks for the help earlier."
    assert result.notes == [
        "chat_openai.jsonl: 1 system/developer message(s) dropped",
        "chat_openai.jsonl: 2 tool/function message(s) or tool calls without text dropped",
        "chat_openai.jsonl: 1 non-text content part(s) (images, audio, files) dropped",
    ]


def test_sharegpt_json_fixture():
    path = FIXTURES / "chat_sharegpt.json"
    assert detect_format(path) == "chatlog"
    result = load_path(path)
    sessions = result.bundles[0].sessions
    assert [s.id for s in sessions] == ["sg-1", "sg-2"]
    assert [(t.role, t.content[:20]) for t in sessions[0].turns] == [
        ("user", "How long should I re"),
        ("assistant", "About five minutes f"),
        ("user", "I prefer it rare, do"),
        ("assistant", "Rest it the same; pu"),
    ]
    assert result.notes == ["chat_sharegpt.json: 1 system/developer message(s) dropped"]


def test_single_conversation_json_and_lmsys_records(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps([{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]))
    assert detect_format(one) == "chatlog"
    assert len(load_path(one).bundles[0].sessions) == 1
    lmsys = write_jsonl(
        tmp_path / "lmsys.jsonl",
        [
            {
                "conversation_id": "abc",
                "model": "vicuna",
                "conversation": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
            }
        ],
    )
    assert detect_format(lmsys) == "chatlog"
    session = load_path(lmsys).bundles[0].sessions[0]
    assert session.id == "abc" and session.meta == {"model": "vicuna"}


def test_a_conversation_with_only_system_text_is_skipped(tmp_path):
    records = chat_records() + [{"messages": [{"role": "system", "content": "only rules"}]}]
    result = load_path(write_jsonl(tmp_path / "c.jsonl", records))
    assert len(result.bundles[0].sessions) == 3
    assert "c.jsonl: 1 conversation(s) without user or assistant text skipped" in result.notes


def _err(tmp_path, records, name="c.jsonl") -> str:
    with pytest.raises(FormatError) as info:
        load_path(write_jsonl(tmp_path / name, records), format="chatlog")
    return str(info.value)


def test_error_unknown_role(tmp_path):
    records = chat_records()
    records[1]["messages"][3]["role"] = "bot"
    assert _err(tmp_path, records) == (
        "c.jsonl: line 2: messages[3].role: expected one of 'user', 'assistant', 'system', 'tool', got 'bot'"
    )


def test_error_sharegpt_unknown_from(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps([{"conversations": [{"from": "humn", "value": "x"}]}]))
    with pytest.raises(FormatError) as info:
        load_path(path, format="chatlog")
    assert (
        str(info.value)
        == "s.json: record 0: conversations[0].from: expected one of 'human', 'gpt', 'system', got 'humn'"
    )


def test_error_content_shapes(tmp_path):
    records = chat_records()
    records[0]["messages"][1]["content"] = 42
    assert _err(tmp_path, records) == (
        "c.jsonl: line 1: messages[1].content: expected a string or a list of content parts, got a number"
    )
    records = chat_records()
    del records[2][0]["content"]
    assert _err(tmp_path, records) == "c.jsonl: line 3: [0].content: required field is missing"
    records = chat_records()
    records[1]["messages"][0]["content"][0] = 5
    assert _err(tmp_path, records) == "c.jsonl: line 2: messages[0].content[0]: expected an object, got a number"


def test_error_record_shapes_and_duplicates(tmp_path):
    assert _err(tmp_path, [{"text": "hi"}]) == (
        "c.jsonl: line 1: expected a 'messages', 'conversations' or 'conversation' list, found none"
    )
    assert _err(tmp_path, [{"messages": "hi"}]) == "c.jsonl: line 1: messages: expected an array, got a string"
    records = chat_records()
    records[1]["id"] = "trip-1"
    assert _err(tmp_path, records) == "c.jsonl: line 2: id: duplicate conversation id 'trip-1', also line 1"
    assert _err(tmp_path, [{"messages": [{"role": "system", "content": "x"}]}]) == (
        "c.jsonl: holds no conversation with user or assistant messages"
    )


def test_json_lines_saved_as_dot_json_still_load(tmp_path):
    path = tmp_path / "export.json"
    path.write_text((FIXTURES / "chat_openai.jsonl").read_text(encoding="utf-8"))
    assert detect_format(path) == "chatlog"
    assert [s.id for s in load_path(path).bundles[0].sessions] == ["trip-1", "trip-2", "export-c0002"]
