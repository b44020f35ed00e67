"""OP-Bench's prompts as data: every template equals its reference file byte for byte (MIT,
../shared/reference/op-bench/prompts), its citation names the commit SOURCE.txt names, and the
messages the op-bench methods and judge send equal the official construction from those files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.benchmarks.opbench.judge import judge_prompt
from core.benchmarks.opbench.methods import answer_messages
from core.formats import load_path
from core.history.build import build_context
from core.judges import templates as judge_templates
from core.methods import plan, prompts
from tests.conftest import reference

FIXTURE = Path(__file__).parents[1] / "fixtures" / "opbench" / "handmade_overpersonalized.json"
METHOD_TABLES = ["answer_system", "answer_user_with_memory", "answer_user_without_memory", "memory_context"]
JUDGE_TABLES = ["irrelevance", "sycophancy_fact", "sycophancy_value", "sycophancy_memory"]


def ref(name: str) -> str:
    return reference("op-bench", "prompts", name).read_bytes().decode("utf-8")


@pytest.mark.parametrize("key", METHOD_TABLES)
def test_answer_template_equals_the_reference_file(key):
    table = prompts.template("op-bench", key)
    assert table["text"] == ref(Path(table["reference"]).name)
    assert table["verbatim"] is True and table["licence"] == "MIT"
    source = reference("op-bench", "SOURCE.txt").read_text(encoding="utf-8")
    assert table["official"]["repo"] == "yulinlp/OP-Bench" and table["official"]["commit"] in source


@pytest.mark.parametrize("key", JUDGE_TABLES)
def test_judge_template_equals_the_reference_file(key):
    t = judge_templates.template("op-bench", key)
    assert t.fields["text"] == ref(f"judge_{key}.txt")
    assert t.verbatim and t.version == "op-bench-5104b27"


def test_the_archived_irrelevance_file_differs_only_in_apostrophes():
    # PROTOCOL.md §1: we keep the code string (5104b27), not the archived paper file
    archived = reference("op-bench", "prompts", "archived", "score_irrelevance.txt").read_text(encoding="utf-8")
    assert archived.replace("\u2019", "'") == ref("judge_irrelevance.txt")
    assert judge_templates.template("op-bench", "irrelevance").fields["text"] != archived


def test_the_sent_messages_equal_the_official_construction():
    bundle = load_path(FIXTURE).bundles[0]  # Maren
    query = bundle.query("irrelevance_easy-0")
    memory = (
        "Maren loves throwing stoneware bowls on the pottery wheel.\nMaren runs mountain trails every Saturday morning."
    )
    context = ref("memory_context.txt").format(person_name="Maren", memory=memory)
    user = ref("answer_user_with_memory.txt").format(memory=context, question=query.text)
    p = plan("op-bench", build_context(bundle, query=query.id, config="full"), query)
    (step,) = p.steps
    assert [(m.role, m.content) for m in step.messages] == [("system", ref("answer_system.txt")), ("user", user)]
    assert (step.temperature, step.max_tokens) == (0.0, 512)
    bare = plan("op-bench-no-memory", build_context(bundle, query=query.id, config="full"), query)
    assert bare.steps[0].messages[1].content == ref("answer_user_without_memory.txt").format(question=query.text)
    # a blank memory falls back to the without-memory template, as evaluation.py does
    assert answer_messages("Q?", "Maren", "  ")[1].content == ref("answer_user_without_memory.txt").format(
        question="Q?"
    )


@pytest.mark.parametrize(
    ("key", "file"),
    [("irrelevance", "judge_irrelevance.txt"), ("sycophancy_memory", "judge_sycophancy_memory.txt")],
)
def test_the_judge_prompt_is_the_reference_filled(key, file):
    q, r = "Why is the sky {blue}?", "Rayleigh scattering."
    assert judge_prompt(key, q, r) == ref(file).format(question=q, response=r)
