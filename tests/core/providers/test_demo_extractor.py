"""`demo:extractor` runs the real Re-Centering code paths offline: extraction returns the user's
own first-person sentences with valid turn references, verification and relevance answer in the
formats the parsers expect — through the demo provider, not a stub of the judge code."""

from __future__ import annotations

import asyncio

from core.analysis.attributes import extract
from core.analysis.relevance import Target, llm_decisions
from core.formats.native import load_file
from core.model import split_turn_ref
from core.providers.calls import collect
from core.providers.demo import DemoProvider
from tests.conftest import SAMPLE_DATA

PROVIDER = DemoProvider(tokens_per_s=0)


async def complete(spec, messages):
    return await collect(PROVIDER, spec, messages)


def test_extraction_quotes_the_users_own_words_with_valid_evidence():
    bundle = load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]
    result = asyncio.run(extract(bundle, "demo:extractor", complete, embed=None, verifier="demo:extractor"))
    assert not result.errors, result.errors
    attrs = result.attributes
    assert len(attrs) >= 5
    for x in attrs:
        (ref,) = x.attribute.evidence_turns
        turn = bundle.turn(ref)
        assert turn.role == "user"
        quoted = x.attribute.text.split('"')[1]
        assert quoted in turn.content, "the attribute quotes the cited turn"
        assert x.verifier_verdict == "accept"
    # Maya's direct statement of her 3 a.m. meal (p1, E1) is among what it finds.
    assert "maya-p1-e1" in {split_turn_ref(x.attribute.evidence_turns[0])[0] for x in attrs}


def test_relevance_answers_parse_as_decisions():
    targets = [
        Target("attribute", "a1", 'The user says: "I eat my main hot meal at 3 a.m."', True),
        Target("attribute", "a2", 'The user says: "My sister lives in Otley."', False),
    ]
    decisions = asyncio.run(
        llm_decisions("When should I eat my main hot meal on night shifts?", targets, "demo:extractor", complete)
    )
    by_id = {d.target_id: d for d in decisions}
    assert all(d.parse_ok for d in decisions)
    assert by_id["a1"].relevant is True and by_id["a2"].relevant is False
