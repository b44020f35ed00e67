"""Reading Inspect logs: the reference examples import with every sample and score; zstd members;
Inspect's score conventions; samples written by prefscope's export link to their user and query."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from core.formats.errors import FormatError
from core.results import detect_result_format, load_results
from core.results.inspect_log import _value
from tests.conftest import reference

FOLDERS = ("examples", "examples_minimal", "examples_events")


def reference_logs() -> list[Path]:
    root = reference("formats", "inspect_ai")
    return sorted(p for f in FOLDERS for p in (root / f).iterdir() if p.suffix in (".eval", ".json"))


def expected(path: Path) -> list[tuple[str, int, dict]]:
    """(id, epoch, {scorer: value}) per sample, read with the standard library (DEFLATE / JSON)."""
    if path.suffix == ".json":
        samples = json.loads(path.read_text())["samples"]
    else:
        with zipfile.ZipFile(path) as z:
            samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    return sorted((str(s["id"]), s["epoch"], {k: v["value"] for k, v in s["scores"].items()}) for s in samples)


def test_reference_logs_import_with_every_sample_and_score():
    logs = reference_logs()
    assert len(logs) >= 4
    for path in logs:
        assert detect_result_format(path) == "inspect", path.name
        result = load_results(path)
        want = expected(path)
        got = sorted(
            (a.meta["inspect_sample_id"], a.meta["epoch"], {r.judge: r.raw for r in a.recorded}) for a in result.answers
        )
        assert [(i, e, sorted(s)) for i, e, s in got] == [(i, e, sorted(s)) for i, e, s in want], path.name
        for a, (_, _, scores) in zip(
            sorted(result.answers, key=lambda a: (a.meta["inspect_sample_id"], a.meta["epoch"])), want
        ):
            assert {r.judge: r.score for r in a.recorded} == {k: _value(v) for k, v in scores.items()}
            assert all(r.score is not None for r in a.recorded)
            assert a.answer and a.messages and a.messages[-1].role == "user"
            assert a.fallback is not None and a.fallback.user.id == a.user_id  # a placeholder until linked


def test_implicit_example_scores_match_its_results():
    path = (
        reference("formats", "inspect_ai", "examples")
        / "2026-11-20T11-00-00+00-00_prefscope-prefeval-implicit_Qm2Lp8Vx4Hs6Jd9Kf1Ng3T.eval"
    )
    result = load_results(path)
    assert len(result.answers) == 4  # 2 samples x 2 epochs
    assert sum(r.score for a in result.answers for r in a.recorded) / 4 == 0.75  # header's accuracy
    assert {a.model for a in result.answers} == {"openai/gpt-4o-mini"}


def test_zstd_members_are_read(tmp_path):
    src = reference("formats", "inspect_ai", "validation", "roundtrip_from_json.eval")  # written by Inspect
    with zipfile.ZipFile(src) as z:
        assert {i.compress_type for i in z.infolist()} == {93}
    pytest.importorskip("zstandard")
    result = load_results(src)
    assert sorted(a.meta["inspect_sample_id"] for a in result.answers) == ["travel-001", "travel-002"]
    assert sorted(r.raw for a in result.answers for r in a.recorded) == ["C", "I"]


def test_zstd_without_zstandard_is_refused_naming_the_member(monkeypatch):
    src = reference("formats", "inspect_ai", "validation", "roundtrip_from_json.eval")
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(FormatError, match="zstandard"):
        load_results(src, format="inspect")


def _log(samples: list[dict]) -> dict:
    return {
        "version": 2,
        "eval": {"created": "2026-01-01T00:00:00+00:00", "task": "t", "dataset": {}, "model": "x/y", "config": {}},
        "samples": samples,
    }


def test_score_values_and_links(tmp_path):
    samples = [
        {
            "id": 1,
            "epoch": 1,
            "input": "Where to?",
            "target": "",
            "output": {"completion": "Porto."},
            "scores": {"a": {"value": "P"}, "b": {"value": {"x": 1, "y": "no"}}, "c": {"value": [1, 2]}},
        },
        {
            "id": "maya.p1-open",
            "epoch": 2,
            "input": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "target": "",
            "messages": [{"role": "assistant", "content": "Hello"}],
            "metadata": {"user_id": "maya", "query_id": "p1-open"},
            "scores": {
                "rubric_alignment": {
                    "value": 4.0,
                    "explanation": "ok",
                    "metadata": {
                        "kind": "rubric",
                        "dimension": "alignment",
                        "judge_model": "demo:heuristic",
                        "scale_min": 1,
                        "scale_max": 5,
                    },
                }
            },
        },
    ]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(_log(samples)))
    assert detect_result_format(path) == "inspect"
    a, b = sorted(load_results(path).answers, key=lambda a: a.meta["inspect_sample_id"])
    assert a.answer == "Porto." and a.user_id == "inspect-t-1" and a.messages[0].content == "Where to?"
    assert [(r.judge, r.dimension, r.score) for r in a.recorded] == [
        ("a", "a", 0.5),
        ("b", "b.x", 1.0),
        ("b", "b.y", 0.0),
        ("c", "c", None),
    ]
    assert (b.user_id, b.query_id, b.answer, b.messages[0].content) == ("maya", "p1-open", "Hello", "Hi")
    assert [(r.judge, r.kind, r.dimension, r.score, r.scale_max, r.rationale) for r in b.recorded] == [
        ("demo:heuristic", "rubric", "alignment", 4.0, 5, "ok")
    ]


def test_not_an_inspect_log(tmp_path):
    path = tmp_path / "x.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("other.json", "{}")
    with pytest.raises(FormatError, match="header.json"):
        load_results(path, format="inspect")
