"""No gold reaches the model under test: for every method on every kind of fixture user, the
messages sent carry no dataset id (session, user, query, LoCoMo dia_id, CUPID instance type) and no
gold label (preference, checklist, context factor, answer, explanation) that the history itself does
not state. Gold a user really says in a session (PrefEval's explicit preference, LoCoMo's answers)
is the point of the benchmark, so only gold absent from every turn counts as a leak."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from core.formats import load_path
from core.history.build import build_context
from core.methods import METHODS, plan
from core.model import UserBundle
from tests.conftest import DATASETS
from tests.core.formats.builders import FIXTURES, locomo_sample, prefeval_files, write_tree

ID_FRAGMENT = re.compile(r"[-_:](consistent|contrastive|changing)(?=[-_:]|\b)")
DIA_ID = re.compile(r"\bD:?\d+:\d+\b")
#: Gold that the official protocol itself puts in the prompt: LoCoMo's own QA prompt offers
#: "Not mentioned in the conversation" and the adversarial answer as the two options of a cat-5 question.
#: Session meta a prompt may show: LoCoMo's dates and speaker names (its own prompt names them).
NOT_GOLD = {"date_time", "speakers", "user_speaker"}
SHOWN_BY_PROTOCOL = {"locomo-qa": ("answer", "adversarial_answer")}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> dict[str, UserBundle]:
    root = tmp_path_factory.mktemp("gold")
    out: dict[str, UserBundle] = {}
    for b in load_path(FIXTURES / "cupid_small.jsonl").bundles:
        out[b.user.id] = b
    for b in load_path(write_tree(root / "prefeval", prefeval_files())).bundles:
        out.setdefault("prefeval-" + b.user.id, b)
    sample = root / "locomo.json"
    sample.write_text(__import__("json").dumps([locomo_sample()]), encoding="utf-8")
    out["locomo-synthetic"] = load_path(sample).bundles[0]
    real = DATASETS / "locomo" / "locomo10_conv-30.json"
    if real.exists():
        out["locomo-conv-30"] = load_path(real).bundles[0]
    return out


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _gold(bundle: UserBundle, query, method: str) -> dict[str, str]:
    """Label -> gold string that must not appear in the prompt."""
    gold: dict[str, str] = {"user id": bundle.user.id}
    gold |= {f"session id {s.id}": s.id for s in bundle.sessions}
    gold |= {f"query id {q.id}": q.id for q in bundle.queries}
    for s in bundle.sessions:
        gold |= {
            f"context factor of {s.id}": s.context_factor or "",
            f"session preference of {s.id}": s.contextual_preference or "",
        }
        gold |= {f"session meta of {s.id}": v for v in _strings({k: v for k, v in s.meta.items() if k not in NOT_GOLD})}
    for p in bundle.preferences:
        gold[f"preference {p.id}"] = p.text
    for a in bundle.attributes:
        gold[f"attribute {a.id}"] = a.text
    shown = SHOWN_BY_PROTOCOL.get(method, ())
    gold["gold preference"] = query.gold_preference or ""
    gold["explanation"] = query.explanation
    if "answer" not in shown and query.kind == "open":
        gold["gold answer"] = query.answer or ""
    gold |= {f"checklist item {i}": c for i, c in enumerate(query.checklist)}
    gold |= {f"query meta {k}": v for k, v in query.meta.items() if isinstance(v, str) and k not in shown}
    said = "\n".join(t.content for s in bundle.sessions for t in s.turns) + "\n" + query.text
    # Gold the history or the question itself states is not a leak; ids never are stated.
    return {k: v for k, v in gold.items() if len(v.strip()) >= 4 and v not in said}


def _cases(bundles: dict[str, UserBundle]) -> Iterator[tuple[str, UserBundle, object]]:
    for name, bundle in bundles.items():
        queries = bundle.queries
        if name.startswith("locomo"):  # one question of each category
            seen: dict[object, object] = {}
            for q in queries:
                seen.setdefault(q.meta.get("category"), q)
            queries = list(seen.values())
        for q in queries[:6]:
            yield name, bundle, q


@pytest.mark.parametrize("method", list(METHODS))
def test_no_gold_in_any_prompt(bundles, method):
    checked = 0
    for name, bundle, query in _cases(bundles):
        ctx = build_context(bundle, query=query.id, config="full")
        opts = {"retriever": "bm25", "k": 3} if method == "rag" else {}
        p = plan(method, ctx, query, **opts)
        text = "\n\n".join(m.content for step in p.steps for m in step.messages)
        for label, value in _gold(bundle, query, method).items():
            assert value not in text, f"{method} on {name}/{query.id}: {label} reaches the prompt: {value!r}"
        for cs in ctx.sessions:
            assert cs.key not in text, f"{method} on {name}: session key {cs.key} reaches the prompt"
        said = "\n".join(t.content for s in bundle.sessions for t in s.turns)
        assert not ID_FRAGMENT.search(text), f"{method} on {name}: instance type id fragment in the prompt"
        assert not DIA_ID.search(text) or DIA_ID.search(said), f"{method} on {name}: a LoCoMo dia_id in the prompt"
        checked += 1
    assert checked >= 8


def test_cupid_fixture_covers_every_instance_type(bundles):
    assert {b.user.id.rsplit("-", 1)[1] for n, b in bundles.items() if n.startswith("cupid")} == {
        "consistent",
        "contrastive",
        "changing",
    }


def test_attribute_extraction_chunks_show_aliases_and_map_back(bundles):
    from core.analysis.attributes import chunk_history, parse_extraction

    for name, bundle in bundles.items():
        chunks = chunk_history(bundle, 2000)
        assert chunks, name
        for ch in chunks:
            assert bundle.user.id not in ch.text
            assert not any(s.id in ch.text for s in bundle.sessions), f"{name}: a session id in an extraction chunk"
            assert not ID_FRAGMENT.search(ch.text)
            assert set(ch.aliases.values()) == {r.rsplit("#", 1)[0] for r in ch.refs}
        ch = chunks[-1]
        alias, real = next(iter(ch.aliases.items()))
        reply = (
            '{"attributes": [{"attribute": "The user teaches.", "confidence": 0.9, '
            f'"evidence": ["[{alias}#0]", "{alias.lower()}#1", "S999#0", "{real}#0"]}}]}}'
        )
        (cand,), error, notes = parse_extraction(reply, ch.index, ch.refs, ch.aliases)
        assert error is None
        expected = [r for r in (f"{real}#0", f"{real}#1") if r in ch.refs]
        assert cand.evidence == list(dict.fromkeys(expected + ([f"{real}#0"] if f"{real}#0" in ch.refs else [])))
        assert any("S999#0" in n for n in notes)


def test_judge_prompts_carry_no_ids(bundles):
    """Judges legitimately see gold (preference, checklist), never dataset ids."""
    import asyncio

    from core.judges import JUDGES, make_judge
    from core.judges.base import JudgeInput
    from tests.core.judges.scripted import ScriptedJudgeModel, all_text

    model = ScriptedJudgeModel(lambda spec, msgs: "### Most Likely Preference\n\nShort answers.\n\nScore: 3")
    judged = 0
    for name, bundle, query in _cases(bundles):
        method = "cupid-infer" if name.startswith("cupid") else "zero-shot"
        p = plan(method, build_context(bundle, query=query.id, config="full"), query)
        item = JudgeInput(bundle, query, None, p, "A reply.", "demo:generic")
        for kind in (k.name for k in JUDGES.values() if k.needs_model and k.per_response):
            judge = make_judge(f"{kind}:openai:gpt-x")
            if query.kind not in judge.applies_to:
                continue
            before = len(model.calls)
            asyncio.run(judge.judge(item, model))
            for _, msgs in model.calls[before:]:
                text = all_text(msgs)
                ids = [bundle.user.id, *(s.id for s in bundle.sessions), *(q.id for q in bundle.queries)]
                assert not [i for i in ids if i in text], f"{kind} judge on {name}: an id in its prompt"
                assert not ID_FRAGMENT.search(text), f"{kind} judge on {name}: an instance-type id fragment"
            judged += len(model.calls) - before
    assert judged >= 10
