"""Knowledge probes of a query (:meth:`core.model.UserBundle.probes_of`, :func:`core.model.knowledge_probe`)
on the sample users: maya (RealPref-style: p1-open with p1-mcq / p1-tf-yes / p1-tf-no in group p1)
and dana (CUPID-style: checklists, context factors, no MCQ)."""

from __future__ import annotations

import pytest

from core.formats.native import load_file
from core.model import EVIDENCE_DEPTH, HISTORY_END, PROBE_OF, PROBE_PREFIX, Query, knowledge_probe
from tests.conftest import SAMPLE_DATA

QUESTION = "From what you know about me, what do I prefer when it comes to {}? Answer in one or two sentences."


def with_queries(bundle, *queries: Query, drop: tuple[str, ...] = ()):
    kept = [q for q in bundle.queries if q.id not in drop and q.id not in {x.id for x in queries}]
    return bundle.model_copy(update={"queries": [*kept, *queries]})


def test_data_probes_of_the_same_group(maya):
    assert [q.id for q in maya.probes_of(maya.query("p1-open"))] == ["p1-mcq", "p1-tf-yes", "p1-tf-no"]
    assert [q.id for q in maya.probes_of(maya.query("g2-open"))] == ["g2-mcq", "g2-tf-yes", "g2-tf-no"]


def test_without_a_group_the_same_preference_decides(maya):
    ungrouped = [q.model_copy(update={"group": None}) for q in maya.queries if q.preference_id in ("p1", "p2")]
    bundle = with_queries(maya, *ungrouped)
    assert [q.id for q in bundle.probes_of(bundle.query("p1-open"))] == ["p1-mcq", "p1-tf-yes", "p1-tf-no"]
    assert [q.id for q in bundle.probes_of(bundle.query("p2-open"))] == ["p2-mcq", "p2-tf-yes", "p2-tf-no"]


def test_a_group_without_mcq_gets_a_generated_probe(maya):
    # Same preference as p1-mcq, but a group of its own: the group decides, and it has no MCQ/TF.
    alone = maya.query("p1-open").model_copy(update={"id": "p1-open-2", "group": "solo"})
    bundle = with_queries(maya, alone)
    (probe,) = bundle.probes_of(alone)
    assert probe.id == "probe:p1-open-2"


def test_no_probe_for_a_closed_query_or_one_without_preference(maya):
    assert maya.probes_of(maya.query("p1-mcq")) == []
    assert maya.probes_of(maya.query("p1-tf-yes")) == []
    qa = Query(id="qa-1", kind="open", text="When did I move to Otley?")
    assert maya.probes_of(qa) == []
    assert knowledge_probe(maya, qa) is None
    assert knowledge_probe(maya, maya.query("p1-mcq")) is None


def test_cupid_query_gets_a_generated_probe_about_its_context_factor(dana):
    query = dana.query("q-consistent-1")
    (probe,) = dana.probes_of(query)
    assert probe.id == PROBE_PREFIX + "q-consistent-1" == "probe:q-consistent-1"
    assert probe.kind == "open"
    assert probe.text == QUESTION.format("Pieter Bosman (CFO)")
    assert probe.preference_id == "cp1"
    assert probe.meta == {PROBE_OF: "q-consistent-1"}
    assert probe.checklist == query.checklist and len(probe.checklist) == 4
    assert probe.evidence_sessions == query.evidence_sessions
    assert probe.evidence_turns == query.evidence_turns
    assert (probe.context_factor, probe.instance_type, probe.group) == (
        query.context_factor,
        query.instance_type,
        query.group,
    )
    assert probe.gold_preference == query.gold_preference
    # the same sessions are gold for the probe as for the query
    assert dana.gold_evidence(probe, None) == dana.gold_evidence(query, None) == ["dana-t01", "dana-t06", "dana-t13"]


def test_topic_from_the_preference_then_from_the_question(maya):
    p1 = maya.query("p1-open")
    assert knowledge_probe(maya, p1).text == QUESTION.format("Food: Dining Style")
    prefs = [p.model_copy(update={"topic": "dining_style_at_night"}) if p.id == "p1" else p for p in maya.preferences]
    underscored = maya.model_copy(update={"preferences": prefs})
    assert knowledge_probe(underscored, p1).text == QUESTION.format("dining style at night")
    prefs = [p.model_copy(update={"topic": None}) if p.id == "p1" else p for p in maya.preferences]
    no_topic = maya.model_copy(update={"preferences": prefs})
    words = p1.text.split()
    assert len(words) > 24
    assert knowledge_probe(no_topic, p1).text == QUESTION.format(f'the request "{" ".join(words[:24])}"')


def test_a_gold_preference_without_preference_id_is_probed():
    dana = load_file(SAMPLE_DATA / "users" / "dana.json").bundles[0]
    q = Query(
        id="q-gold", kind="open", text="Draft the note  for\nthe depot.", gold_preference="Formal, no contractions."
    )
    probe = knowledge_probe(dana, q)
    assert probe.preference_id is None and probe.gold_preference == "Formal, no contractions."
    assert probe.text == QUESTION.format('the request "Draft the note for the depot."')


def test_probe_copies_only_history_end_and_evidence_depth_from_meta(maya):
    depth = {"tokens": 4000, "blocks": 2, "proportion": 0.3, "source": "x"}
    q = maya.query("p1-open").model_copy(
        update={"meta": {HISTORY_END: "maya-life-03", EVIDENCE_DEPTH: depth, "reference_answers": {"follows": "…"}}}
    )
    assert "reference_answers" in maya.query("p1-open").meta
    probe = knowledge_probe(maya, q)
    assert probe.meta == {HISTORY_END: "maya-life-03", EVIDENCE_DEPTH: depth, PROBE_OF: "p1-open"}


def test_bundle_query_resolves_a_probe_id(maya, dana):
    assert maya.query("probe:p1-open") == knowledge_probe(maya, maya.query("p1-open"))
    assert dana.query("probe:q-changing-1").meta[PROBE_OF] == "q-changing-1"
    assert all(q.id != "probe:p1-open" for q in maya.queries)  # derived, never stored
    with pytest.raises(KeyError, match="probe:p1-mcq"):
        maya.query("probe:p1-mcq")
    with pytest.raises(KeyError):
        maya.query("probe:no-such-query")
