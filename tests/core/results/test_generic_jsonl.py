"""Generic JSON Lines results."""

from __future__ import annotations

import json

import pytest

from core.formats import FormatError
from core.results import detect_result_format, load_results


def _write(tmp_path, *records) -> object:
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_fields_are_read(tmp_path):
    path = _write(
        tmp_path,
        {"user": "maya", "query": "p1-open", "model": "gpt-4o-mini", "answer": "A"},
        {
            "user": "maya",
            "query": "p1-open",
            "model": "m",
            "answer": "B",
            "messages": [{"role": "user", "content": "hi"}],
            "method": "zero-shot",
            "context": "long",
            "turns": 4,
            "meta": {"run": 7},
        },
    )
    assert detect_result_format(path) == "jsonl"
    a, b = load_results(path).answers
    assert (a.user_id, a.query_id, a.model, a.answer, a.messages, a.turns) == (
        "maya",
        "p1-open",
        "gpt-4o-mini",
        "A",
        None,
        None,
    )
    assert (b.method, b.context, b.turns, b.meta, b.record_label) == ("zero-shot", "long", 4, {"run": 7}, "line 2")
    assert [m.content for m in b.messages or []] == ["hi"]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"user": "maya", "query": "q", "model": "m"}, "answer"),
        ({"user": "maya", "query": "q", "model": "m", "answer": "x", "anwser": "y"}, "anwser"),
        (
            {"user": "maya", "query": "q", "model": "m", "answer": "x", "messages": [{"role": "bot", "content": "c"}]},
            "messages[0].role",
        ),
        ({"user": "maya", "query": "q", "model": "m", "answer": "x", "turns": -1}, "turns"),
    ],
)
def test_bad_line_names_file_line_and_field(tmp_path, bad, field):
    path = _write(tmp_path, {"user": "maya", "query": "q", "model": "m", "answer": "ok"}, bad)
    with pytest.raises(FormatError) as err:
        load_results(path, format="jsonl")
    assert (err.value.source, err.value.record, err.value.path) == ("answers.jsonl", "line 2", field)
