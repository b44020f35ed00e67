"""The longmemeval methods send what LongMemEval's run_generation.py sends: templates equal to the
reference prompt files, and whole prompts rebuilt here from a LongMemEval-format file and those files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.formats import load_path
from core.history.build import build_context
from core.methods import plan, prompts
from tests.conformance.longmemeval_reference import official_reader_prompt, ref_text
from tests.conftest import reference

FIXTURE = Path(__file__).parents[1] / "core" / "formats" / "fixtures" / "longmemeval_small.json"
TABLES = list(prompts.family("longmemeval"))


@pytest.mark.parametrize("key", TABLES)
def test_template_equals_the_reference_file(key):
    table = prompts.template("longmemeval", key)
    official = ref_text(table["official"]["path"])
    names = iter(table["placeholders"])
    assert table["text"] == re.sub(r"\{\}", lambda m: "{" + next(names) + "}", official)
    source = reference("longmemeval", "SOURCE.txt").read_text(encoding="utf-8")
    assert table["official"]["commit"] in source


@pytest.mark.parametrize("method", ["longmemeval", "longmemeval-cot"])
def test_full_prompt_equals_the_official_construction(method):
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    for item, bundle in zip(raw, load_path(FIXTURE).bundles, strict=True):
        query = bundle.queries[0]
        p = plan(method, build_context(bundle, query=query.id, config="full"), query)
        (step,) = p.steps
        (message,) = step.messages
        assert message.role == "user"
        assert message.content == official_reader_prompt(item, cot=method.endswith("cot"))
        assert (step.temperature, step.max_tokens) == (0.0, 800)


def test_sessions_are_sorted_by_date_and_ascii_escaped():
    bundle = load_path(FIXTURE).bundles[0]
    query = bundle.queries[0]
    text = plan("longmemeval", build_context(bundle, query=query.id, config="full"), query).steps[0].messages[0].content
    # the fixture's second session is the earliest: it becomes Session 1
    assert '\n### Session 1:\nSession Date: 2023/05/20 (Sat) 02:21\nSession Content:\n\n[{"role": "user"' in text
    assert "\\u2014" in text and "\u2014" not in text and "has_answer" not in text
