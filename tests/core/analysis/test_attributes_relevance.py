"""Attribute extraction (chunking, parsing, confidence filter, 0.7 merging, verifier) and relevance
deciders with agreement."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.analysis import relevance as rel
from core.analysis.attributes import chunk_history, cluster, combined_confidence, extract, parse_extraction
from core.model import Attribute
from core.plan import RetrievedTurn
from tests.core.judges.scripted import ScriptedJudgeModel, user_text

# TEST EMBEDDING (not a real model): fixed unit vectors chosen so that the two "live calls" texts
# have cosine 0.8 (merge at 0.7) and "live calls" vs "climbing" has cosine 0.6 (kept apart at 0.7).
_VECS = {
    "The user prefers live calls.": [1.0, 0.0, 0.0],
    "The user likes short live meetings.": [0.8, 0.6, 0.0],
    "The user climbs indoors.": [0.6, 0.0, 0.8],
}


def fake_embed(texts):
    return np.array([_VECS[t] for t in texts], dtype=float)


def test_cluster_merges_at_cosine_0_7_with_average_linkage():
    vecs = fake_embed(list(_VECS))
    assert cluster(vecs, 0.7) == [[0, 1], [2]]
    # average linkage: {0,1} vs 2 averages (0.6 + 0.48) / 2 = 0.54 (single linkage would say 0.6)
    assert cluster(vecs, 0.55) == [[0, 1], [2]]
    assert cluster(vecs, 0.53) == [[0, 1, 2]]
    assert cluster(vecs, 0.95) == [[0], [1], [2]]


def _greedy_average_linkage(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """The merge rule spelled out: join the two clusters with the highest mean pairwise cosine
    while it is ≥ threshold (what ``cluster`` does with scipy)."""
    v = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-300)
    sim = v @ v.T
    clusters = [[i] for i in range(len(v))]
    while len(clusters) > 1:
        best, a, b = max(
            (sim[np.ix_(clusters[a], clusters[b])].mean(), a, b)
            for a in range(len(clusters))
            for b in range(a + 1, len(clusters))
        )
        if best < threshold:
            break
        clusters[a] = sorted(clusters[a] + clusters.pop(b))
    return sorted(clusters, key=lambda c: c[0])


def test_cluster_follows_the_merge_rule_on_random_vectors():
    rng = np.random.default_rng(7)
    for trial in range(40):
        vecs = rng.normal(size=(int(rng.integers(2, 12)), 4)) + rng.normal(size=4)  # correlated: some merges
        for threshold in (0.3, 0.7, 0.9):
            assert cluster(vecs, threshold) == _greedy_average_linkage(vecs, threshold), (trial, threshold)


def test_cluster_edges_exact_threshold_zero_vector_and_tiny_inputs():
    at = np.array([[1.0, 0.0], [0.7, np.sqrt(1 - 0.49)]])  # cosine exactly 0.7: merges
    assert cluster(at, 0.7) == [[0, 1]]
    assert cluster(np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]]), 0.7) == [[0, 2], [1]]
    assert cluster(np.zeros((0, 3)), 0.7) == [] and cluster(np.ones((1, 3)), 0.7) == [[0]]


def test_chunks_never_split_a_turn_and_carry_turn_refs(priya):
    chunks = chunk_history(priya, 3000)
    assert len(chunks) > 1
    refs = [r for c in chunks for r in c.refs]
    assert len(refs) == len(set(refs)) == sum(len(s.turns) for s in priya.sessions if s.kind != "filler")
    for c in chunks:
        for ref in c.refs:
            session, index = ref.rsplit("#", 1)
            alias = next(a for a, real in c.aliases.items() if real == session)
            assert f"[{alias}#{index}] " in c.text and f"[{ref}]" not in c.text  # neutral ids only
        assert len(c.text) <= 3000 or len(c.refs) == 1


def test_parse_extraction_repairs_and_reports():
    text = """Here you go:
```json
{"attributes": [
  {"attribute": "The user prefers live calls.", "reasoning": "says so", "confidence": 0.9, "evidence": ["s1#0", "zz#9"]},
  {"attribute": "The user climbs indoors.", "confidence": "80%", "evidence": "s1#2"},
  {"attribute": "No confidence here", "evidence": []}
]}
```"""
    cands, error, notes = parse_extraction(text, 0, ["s1#0", "s1#2"])
    assert error is None
    assert [(c.text, c.confidence, c.evidence) for c in cands] == [
        ("The user prefers live calls.", 0.9, ["s1#0"]),
        ("The user climbs indoors.", 0.8, ["s1#2"]),
    ]
    assert any("zz#9" in n for n in notes) and any("percentage" in n for n in notes)
    assert any("No confidence" in n or "attributes[2]" in n for n in notes)
    assert (
        parse_extraction("I could not find anything.", 0, [])[1]
        == "no JSON object with an 'attributes' list in the output"
    )


async def test_extract_filters_merges_and_verifies(priya):
    first_ref = f"{priya.sessions[0].id}#0"
    per_chunk = [
        {
            "attributes": [
                {
                    "attribute": "The user prefers live calls.",
                    "reasoning": "r1",
                    "confidence": 0.7,
                    "evidence": [first_ref],
                },
                {"attribute": "The user climbs indoors.", "reasoning": "r2", "confidence": 0.9, "evidence": []},
                {"attribute": "The user is a pilot.", "reasoning": "weak", "confidence": 0.2, "evidence": []},
            ]
        },
        {
            "attributes": [
                {
                    "attribute": "The user likes short live meetings.",
                    "reasoning": "r3",
                    "confidence": 0.5,
                    "evidence": [],
                }
            ]
        },
    ]

    def answer(spec, messages):
        text = user_text(messages)
        if "## Attribute" in text:
            verdict = "reject" if "climbs" in text else "accept"
            return json.dumps({"verdict": verdict, "reason": "checked"})
        n = int(text.split("Excerpt ")[1].split(" of")[0]) - 1
        return json.dumps(per_chunk[n]) if n < len(per_chunk) else '{"attributes": []}'

    model = ScriptedJudgeModel(answer)
    ex = await extract(
        priya, "openai:gpt-4o-mini", model, embed=fake_embed, chunk_chars=20_000, verifier="anthropic:claude-sonnet-4-5"
    )
    texts = [x.attribute.text for x in ex.attributes]
    assert len(texts) == 2 and "The user climbs indoors." in texts
    merged = next(x for x in ex.attributes if x.merged_from)
    assert merged.merged_from in (["The user likes short live meetings."], ["The user prefers live calls."])
    # chunk 0 (0.7) and chunk 1 (0.5) are independent: 1 - 0.3 * 0.5
    assert merged.attribute.confidence == pytest.approx(0.85)
    assert merged.attribute.evidence_turns == [first_ref]
    assert [c.text for c in ex.dropped] == ["The user is a pilot."]
    assert all(x.attribute.source == "openai:gpt-4o-mini" for x in ex.attributes)
    verdicts = {x.attribute.text: x.verifier_verdict for x in ex.attributes}
    assert verdicts["The user climbs indoors."] == "reject"
    assert ex.prompt_version == "recentering-extract-v1" and ex.verifier_version == "recentering-verify-v1"


def test_same_chunk_members_count_once_in_confidence():
    from core.analysis.attributes import Candidate

    same = [Candidate("a", "", 0.6, [], 0), Candidate("b", "", 0.5, [], 0)]
    assert combined_confidence(same) == pytest.approx(0.6)


# -- relevance -----------------------------------------------------------------------------------


def _relevance_case(priya):
    q = priya.query("p1-open")
    gold_session = priya.gold_evidence(q, 1)[0]
    other = next(s.id for s in priya.sessions if s.id not in priya.gold_evidence(q, 1))
    attrs = [
        Attribute(
            id="a1",
            text="The user wants live calls and written notes instead of recorded video updates.",
            evidence_turns=[f"{gold_session}#0"],
            source="t",
        ),
        Attribute(
            id="a2", text="The user boulders indoors at a climbing gym.", evidence_turns=[f"{other}#0"], source="t"
        ),
    ]
    retrieved = [
        RetrievedTurn(
            rank=1,
            session_id=gold_session,
            turn_index=0,
            similarity=0.5,
            is_evidence=True,
            text="I hate Loom walkthrough updates from clients.",
        ),
        RetrievedTurn(
            rank=2,
            session_id=other,
            turn_index=0,
            similarity=0.3,
            is_evidence=False,
            text="Bouldering at the gym tonight.",
        ),
    ]
    targets = rel.attribute_targets(priya, q, 1, attrs) + rel.turn_targets(retrieved)
    return q, targets


async def test_deciders_side_by_side_with_agreement(priya):
    q, targets = _relevance_case(priya)
    assert [t.gold for t in targets] == [True, False, True, False]

    def answer(spec, messages):  # an over-selecting LLM: says yes to everything but the climbing attribute
        return (
            '{"relevant": "no", "reason": "unrelated"}'
            if "boulders" in user_text(messages)
            else '{"relevant": "yes", "reason": "changes the plan"}'
        )

    decisions = (
        rel.gold_decisions(targets)
        + rel.bm25_decisions(q.text, targets)
        + await rel.llm_decisions(q.text, targets, "openai:gpt-4o-mini", ScriptedJudgeModel(answer))
    )
    table = rel.side_by_side(decisions)
    assert set(table[("attribute", "a1")]) == {"gold", "bm25", "llm"}
    agree = {a.decider: a for a in rel.agreement(decisions, "gold")}
    llm = agree["llm"]
    assert llm.n == 4 and llm.positive_rate == 0.75
    assert llm.recall == 1.0 and llm.precision == pytest.approx(2 / 3)
    assert llm.kappa == pytest.approx(0.5)


async def test_unparseable_llm_relevance_is_undecided_and_left_out_of_agreement(priya):
    q, targets = _relevance_case(priya)
    decisions = rel.gold_decisions(targets) + await rel.llm_decisions(
        q.text, targets, "openai:gpt-4o-mini", ScriptedJudgeModel(lambda s, m: "Possibly.")
    )
    llm = [d for d in decisions if d.decider == "llm"]
    assert all(d.relevant is None and not d.parse_ok and d.raw == "Possibly." for d in llm)
    [a] = rel.agreement(decisions, "gold")
    assert a.n == 0 and a.kappa is None


def test_embedding_decider_uses_the_injected_embedding(priya):
    q, targets = _relevance_case(priya)

    def embed(texts):  # TEST EMBEDDING: query and the live-calls texts point the same way
        return np.array([[1.0, 0.0] if ("live" in t or "Loom" in t or t == q.text) else [0.0, 1.0] for t in texts])

    ds = rel.embedding_decisions(q.text, targets, embed)
    assert [d.relevant for d in ds] == [True, False, True, False]
