"""Golden tests: the exact messages of every method on the fixture user.

Regenerate after an intended change: PREFSCOPE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/prompting
"""

import pytest

from core.history.build import build_context
from core.history.tokens import count_messages
from core.methods import METHODS, method_info, plan, prompts
from tests.core.conftest import check_golden

CASES = [(m, "q1-open") for m in METHODS] + [("reminder", "q1-mcq"), ("zero-shot", "q1-t"), ("cupid-generate", "q1-f")]


@pytest.mark.parametrize("method,query_id", CASES)
def test_golden_plan(mara, method, query_id):
    ctx = build_context(mara, query=query_id, expression_type=1, config="simple", seed=0)
    opts = {"retriever": "bm25", "k": 3} if method == "rag" else {}
    p = plan(method, ctx, mara.query(query_id), **opts)
    assert len(p.steps) == method_info(method).steps
    for step in p.steps:
        assert step.tokens == count_messages(step.messages)
    check_golden(f"{method}__{query_id}", p.model_dump(mode="json"))


def test_cupid_golden_on_task_sessions(cupid_user):
    ctx = build_context(cupid_user, query="qc1", config="full")
    for method in ("cupid-generate", "cupid-infer", "summary-memory"):
        check_golden(f"cupid__{method}", plan(method, ctx, cupid_user.query("qc1")).model_dump(mode="json"))


def test_realpref_prompts_are_verbatim(mara):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="simple")
    reminder = (
        "When you answer the question, recall my preference indicated in the conversation history, "
        "and provide an answer that aligns with my preferences."
    )
    last = plan("reminder", ctx, mara.query("q1-open")).steps[0].messages[-1]
    assert last.role == "user" and last.content == reminder + "\n\n" + mara.query("q1-open").text
    few = plan("fewshot-cot", ctx, mara.query("q1-open")).steps[0].messages[-1].content
    assert few.count("Example ") == 3 and "Casa Mathilda" in few
    assert "(not the user preferences in the examples above)" in few
    rag = plan("rag", ctx, mara.query("q1-open"), retriever="bm25").steps[0].messages[-1].content
    assert "Here are the 4 most relevant contextual turns" in rag and "Context turn 4:\n- user: " in rag


def test_history_alternates_and_question_is_last(mara, cupid_user):
    for bundle, q in ((mara, "q1-open"), (cupid_user, "qc1")):
        ctx = build_context(bundle, query=q, expression_type=1 if bundle is mara else None, config="full")
        msgs = plan("zero-shot", ctx, bundle.query(q)).steps[0].messages
        roles = [m.role for m in msgs]
        assert all(a != b for a, b in zip(roles, roles[1:]))
        assert msgs[-1].content.endswith(bundle.query(q).text)


def test_multistep_markers(mara):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="simple")
    wf = plan("workflow", ctx, mara.query("q1-open"))
    assert wf.steps[1].needs() == ["preferences"]
    sc = plan("self-critic", ctx, mara.query("q1-open"))
    assert [s.needs() for s in sc.steps] == [[], ["answer"], ["answer", "critique"]]
    rc = plan("recentering", ctx, mara.query("q1-open"))
    assert [s.needs() for s in rc.steps] == [[], ["extract"], ["select"]]
    assert "[S1#0] User:" in rc.steps[0].messages[0].content and "s-p1-e1" not in rc.steps[0].messages[0].content
    assert rc.aliases["S1"] == rc.context[0].session_id


def test_generic_sends_no_history(mara):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="simple")
    g = plan("generic", ctx, mara.query("q1-open"))
    assert len(g.steps[0].messages) == 1 and g.history_tokens == 0 and g.evidence == []


def test_every_template_has_a_source():
    for fam in ("realpref", "interpref", "cupid", "prefeval", "recentering", "answers"):
        for key, src in prompts.sources(fam).items():
            assert src, f"{fam}.{key} has no source"
        ours = [k for k, t in prompts.family(fam).items() if not t.get("verbatim")]
        for k in ours:
            assert "ours" in prompts.template(fam, k)["source"]
