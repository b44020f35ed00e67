"""LoCoMo evidence ids: the release's spelling slips are normalised, nothing is dropped silently."""

from __future__ import annotations

import json

import pytest

from core.benchmarks.locomo import format as locomo
from core.benchmarks.locomo import format_evidence as locomo_evidence
from tests.conftest import dataset


def _session(n: int, turns: int) -> list[dict]:
    return [
        {"speaker": "Ana" if t % 2 else "Ben", "dia_id": f"D{n}:{t}", "text": f"s{n} t{t}"} for t in range(1, turns + 1)
    ]


def _sample(evidence: list[str]) -> dict:
    conv: dict = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n in (4, 9, 11, 30):
        conv[f"session_{n}_date_time"] = f"1:00 pm on {n % 28 + 1} May, 2023"
        conv[f"session_{n}"] = _session(n, 30)
    return {
        "sample_id": "ev",
        "conversation": conv,
        "qa": [{"question": "Q?", "answer": "A", "evidence": evidence, "category": 4}],
        "observation": {"session_4_observation": {"Ana": [["Ana likes tiles.", ["D4:05", "D4:x"]]]}},
    }


@pytest.mark.parametrize(
    ("token", "canonical"),
    [("D1:3", "D1:3"), ("D30:05", "D30:5"), ("D:11:26", "D11:26"), ("D007:010", "D7:10"), ("D", None), ("D1", None)],
)
def test_canonical_dia_id(token, canonical):
    assert locomo_evidence.canonical_dia_id(token) == canonical


def test_synthetic_sample_normalises_and_reports_every_id(tmp_path):
    evidence = ["D:11:26", "D30:05", "D", "D9:1 D4:4", "D8:6; D9:17", "D99:1"]
    path = tmp_path / "sample.json"
    path.write_text(json.dumps([_sample(evidence)]), encoding="utf-8")
    result = locomo.load(path)
    bundle = result.bundles[0]
    (query,) = bundle.queries
    assert [bundle.turn(r).source_id for r in query.evidence_turns] == ["D11:26", "D30:5", "D9:1", "D4:4", "D9:17"]
    assert query.meta["evidence_raw"] == evidence
    notes = "\n".join(result.notes)
    assert "normalised 2 QA evidence id(s)" in notes
    assert "D:11:26 -> D11:26" in notes and "D30:05 -> D30:5" in notes
    assert "dropped malformed 1 QA evidence id(s) (qa[0]: D)" in notes
    assert "dropped unknown (no such turn) 2 QA evidence id(s)" in notes and "D8:6" in notes and "D99:1" in notes
    # Observations go through the same rule and the same reporting.
    (attr,) = bundle.attributes
    assert [bundle.turn(r).source_id for r in attr.evidence_turns] == ["D4:5"]
    assert "normalised 1 observation evidence id(s)" in notes and "dropped malformed 1 observation" in notes


def test_real_sample_keeps_every_evidence_id():
    path = dataset("locomo", "locomo10_conv-30.json")
    raw = json.loads(path.read_text(encoding="utf-8"))[0]
    result = locomo.load(path)
    bundle = result.bundles[0]
    assert not any("dropped" in n for n in result.notes)
    for q, item in zip(bundle.queries, raw["qa"], strict=True):
        tokens = [t for e in item["evidence"] for t in e.replace(";", " ").split()]
        assert len(q.evidence_turns) == len(dict.fromkeys(locomo_evidence.canonical_dia_id(t) for t in tokens))
        assert [bundle.turn(r).source_id for r in q.evidence_turns] == [
            locomo_evidence.canonical_dia_id(t) for t in tokens
        ]
