"""locomo-qa sends what LoCoMo's evaluate_gpts.py sends: templates equal to the reference prompt
files, and the whole prompt of the real conv-30 sample rebuilt here from the JSON and those files."""

from __future__ import annotations

import json
import re

import pytest

from core.benchmarks.locomo.methods import cat5_options
from core.formats import load_path
from core.history.build import build_context
from core.methods import plan, prompts
from tests.conftest import dataset, reference

TABLES = [k for k, t in prompts.family("locomo").items() if "official" in t]


def _ref(name: str) -> str:
    return reference("locomo", "prompts", name).read_text(encoding="utf-8")


@pytest.mark.parametrize("key", TABLES)
def test_template_equals_the_reference_file(key):
    table = prompts.template("locomo", key)
    official = _ref(table["official"]["path"].removeprefix("prompts/"))
    names = iter(table["placeholders"])
    # Positional {} and %s get the table's names, in order; constructed files already use names.
    renamed = re.sub(r"\{\}|%s", lambda m: "{" + next(names) + "}", official)
    assert table["text"] == renamed
    assert table["official"]["commit"].startswith(
        reference("locomo", "SOURCE.txt").read_text(encoding="utf-8").split("@ ")[1][:8]
    )


def test_every_prompt_file_of_the_qa_path_has_a_table():
    used = {prompts.template("locomo", k)["official"]["path"] for k in TABLES}
    assert used == {
        f"prompts/{n}.txt"
        for n in (
            "conv_start_prompt",
            "qa_prompt",
            "qa_prompt_cat_5",
            "question_suffix_cat_2",
            "question_suffix_cat_5",
            "cat_5_not_mentioned_option",
            "session_header",
            "dialog_turn",
            "image_share_line",
        )
    }


def _expected(sample: dict, item: dict, options: tuple[str, str]) -> str:
    """The prompt evaluate_gpts.py builds for one question (batch size 1), from the files."""
    conv = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k])
    context = ""
    for n in numbers:
        context += _ref("session_header.txt").format(date_time=conv[f"session_{n}_date_time"])
        for turn in conv[f"session_{n}"]:
            context += _ref("dialog_turn.txt").format(speaker=turn["speaker"], text=turn["text"])
            if turn.get("blip_caption"):
                context += _ref("image_share_line.txt") % turn["blip_caption"]
    context += "\n\n" * len(numbers)
    q = item["question"]
    if item["category"] == 2:
        q += _ref("question_suffix_cat_2.txt")
    if item["category"] == 5:
        assert set(options) == {_ref("cat_5_not_mentioned_option.txt"), item["adversarial_answer"]}
        q += _ref("question_suffix_cat_5.txt").format(*options)
    opening = _ref("conv_start_prompt.txt").format(conv["speaker_a"], conv["speaker_b"])
    qa = _ref("qa_prompt_cat_5.txt" if item["category"] == 5 else "qa_prompt.txt")
    return opening + context + "\n\n" + qa.format(q)


@pytest.fixture(scope="module")
def conv30():
    path = dataset("locomo", "locomo10_conv-30.json")
    return json.loads(path.read_text(encoding="utf-8"))[0], load_path(path).bundles[0]


@pytest.mark.parametrize("category", [1, 2, 3, 4, 5])
def test_full_prompt_equals_the_official_construction(conv30, category):
    sample, bundle = conv30
    k = next((i for i, item in enumerate(sample["qa"]) if item["category"] == category), None)
    if k is None:
        pytest.skip(f"this sample has no category-{category} question")
    query = bundle.queries[k]
    ctx = build_context(bundle, query=query.id, config="full")
    p = plan("locomo-qa", ctx, query)
    (step,) = p.steps
    (message,) = step.messages
    assert message.role == "user"
    assert message.content == _expected(sample, sample["qa"][k], cat5_options(query))
    assert (step.temperature, step.max_tokens) == (0.0, 32)
    assert not re.search(r"\bD\d+:\d+\b", message.content)  # LoCoMo shows no evidence ids


def test_image_turns_show_their_raw_text_and_caption(conv30):
    sample, bundle = conv30
    images = [
        t
        for k, v in sample["conversation"].items()
        if re.fullmatch(r"session_\d+", k)
        for t in v
        if t.get("blip_caption")
    ]
    assert images
    query = bundle.queries[0]
    text = plan("locomo-qa", build_context(bundle, query=query.id, config="full"), query).steps[0].messages[0].content
    for t in images:
        assert f'{t["speaker"]} said, "{t["text"]}"\n[shares {t["blip_caption"]}]\n' in text


def test_cat5_option_order_is_seeded_and_both_orders_occur(conv30):
    _, bundle = conv30
    adversarial = [q for q in bundle.queries if q.meta.get("category") == 5]
    orders = [cat5_options(q) for q in adversarial]
    assert orders == [cat5_options(q) for q in adversarial]  # reproducible
    assert len({o[0] == "Not mentioned in the conversation" for o in orders}) == 2
