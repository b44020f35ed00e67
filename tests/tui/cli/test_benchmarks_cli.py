"""`prefscope benchmarks` lists the registry; `judge --help` and `prompt --list-methods` list every
judge and method it knows (no hand-kept lists)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from core import benchmark as benchmarks
from core.judges import JUDGES
from core.methods import METHODS
from tui.cli import main


def test_benchmarks_lists_each_builtin_with_its_parts():
    out = CliRunner().invoke(main, ["benchmarks"])
    assert out.exit_code == 0, out.output
    for name in benchmarks.BUILTIN:
        assert f"\n{name}  " in f"\n{out.output}"
    assert "report sections  longmemeval" in out.output
    assert "default profile  context prefeval-turns · method prefeval-zero-shot · judge taxonomy" in out.output
    assert "generic (no benchmark)" in out.output


def test_benchmarks_json_and_one_benchmark():
    out = CliRunner().invoke(main, ["benchmarks", "locomo", "--json"])
    assert out.exit_code == 0, out.output
    (locomo,) = json.loads(out.output)["benchmarks"]
    assert locomo["methods"] == ["locomo-qa"] and locomo["judges"] == ["locomo", "mem0", "mem0-f1", "mem0-bleu1"]
    assert locomo["profile"] == {
        "context": "full",
        "method": "locomo-qa",
        "judge": "locomo",
        "factors": ["category", "model"],
    }
    whole = json.loads(CliRunner().invoke(main, ["benchmarks", "--json"]).output)
    assert whole["generic"] == {
        "formats": ["native", "chatlog"],
        "judges": ["demo:heuristic", "choice", "probe-recall", "restraint"],
        "result_formats": ["eee", "inspect", "lm-eval", "openai-batch", "openai-evals", "jsonl"],
    }


def test_an_unknown_benchmark_is_a_usage_error():
    out = CliRunner().invoke(main, ["benchmarks", "nosuch"])
    assert out.exit_code == 2 and "unknown benchmark 'nosuch'" in out.output


def test_judge_help_lists_every_per_response_judge():
    text = " ".join(CliRunner().invoke(main, ["judge", "--help"]).output.split())
    for kind in JUDGES.values():
        if kind.per_response:
            assert kind.name in text, kind.name
    kinds = "rubric|checklist|matching|taxonomy|longmemeval|mem0|personamem-v2-boxed|personamem-v2-vote|op-bench"
    assert f"--kind [{kinds}|personalization]" in text


def test_list_methods_lists_every_registered_method_in_order():
    out = CliRunner().invoke(main, ["prompt", "--list-methods"])
    assert [line.split()[0] for line in out.output.splitlines()] == list(METHODS)
