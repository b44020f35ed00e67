"""Benchmarks are registered through the entry-point group `prefscope.benchmarks`, the built-in
ones too; the registries merge their entries in today's order, and nothing is discovered on import."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import pytest

from core import benchmark as benchmarks
from core.benchmark import Benchmark
from core.formats import FORMATS, format_order
from core.judges import JUDGES, judge_choices, llm_kinds
from core.methods import METHODS
from core.results import RESULT_FORMATS
from tests.conftest import REPO
from tests.tui.conftest import child_env


def test_every_builtin_benchmark_has_its_entry_point():
    points = {ep.name: ep.value for ep in metadata.entry_points(group=benchmarks.GROUP)}
    for name in benchmarks.BUILTIN:
        package = name.replace("-", "_").replace("op_bench", "opbench")
        assert points.get(name) == f"core.benchmarks.{package}:BENCHMARK", "run: pip install --no-deps -e ."


def test_installed_benchmarks_are_typed_and_named_after_their_entry_point():
    installed = benchmarks.installed()
    assert [b.name for b in installed[: len(benchmarks.BUILTIN)]] == list(benchmarks.BUILTIN)
    assert all(isinstance(b, Benchmark) for b in installed)


def test_registries_keep_todays_order():
    # Installed benchmarks' entries go after the built-ins and before the generic fallbacks.
    assert [n for n in format_order() if FORMATS[n].target.startswith("core.")] == [
        *("native", "longmemeval-cleaned", "longmemeval", "prefeval", "cupid", "locomo", "op-bench"),
        *("personamem", "personamem-v2", "personamem-v3", "chatlog"),
    ]
    assert format_order()[0] == "native" and format_order()[-1] == "chatlog"
    builtin_methods = [n for n in METHODS if METHODS[n].target.startswith("core.")]
    assert builtin_methods == [
        *("zero-shot", "reminder", "fewshot-cot", "rag", "np", "td", "cot", "workflow"),
        *("cupid-generate", "cupid-infer", "summary-memory"),
        *("prefeval-zero-shot", "prefeval-remind", "prefeval-cot", "prefeval-rag", "self-critic", "recentering"),
        *("locomo-qa", "longmemeval", "longmemeval-cot", "personamem", "op-bench", "personamem-merged"),
        *("op-bench-no-memory", "personamem-v2", "personamem-v2-user-roles", "personamem-v3", "generic"),
    ]
    assert list(METHODS)[-1] == "generic"
    assert [n for n in JUDGES if JUDGES[n].target.startswith("core.")] == [
        *("demo:heuristic", "choice", "probe-recall", "restraint", "locomo", "mem0-f1", "mem0-bleu1", "rubric"),
        *("checklist", "matching", "taxonomy", "longmemeval", "mem0", "personamem-v2-boxed", "personamem-v2-vote"),
        *("op-bench", "pmv3-slice", "pmv3-slice-jaccard", "personalization", "pairwise"),
    ]
    assert list(RESULT_FORMATS) == [
        *("prefeval", "longmemeval-cleaned", "longmemeval", "personamem", "personamem-v2", "personamem-v3", "locomo"),
        "mem0",
        *("eee", "inspect", "lm-eval", "openai-batch", "openai-evals", "jsonl"),
    ]


def test_aliases_and_derived_lists_come_from_the_benchmarks():
    assert METHODS.find("self_critic").name == "self-critic"
    assert METHODS.find("no-history").name == "generic"
    assert JUDGES.find("heuristic").name == "demo:heuristic"
    assert "longmemeval" in llm_kinds() and "locomo" not in llm_kinds()
    assert "pairwise" not in judge_choices() and "locomo" in judge_choices()
    assert FORMATS["cupid"].target == "core.benchmarks.cupid.format"


def test_sections_of_the_builtin_benchmarks_in_their_report_order():
    names = [s.name for _, s in benchmarks.report_sections() if s.target.startswith("core.")]
    assert names == [
        "longmemeval",
        "personamem-v2",
        "personamem-v2-boxed",
        "personamem-v2-vote",
        "personamem-v3",
        "personamem-v3-jaccard",
        "locomo",
        "mem0-j",
        "mem0-f1",
        "mem0-bleu1",
        "cupid-matching",
        "cupid-generation",
        "interpref-pass",
        "interpref-bradley-terry",
        "op-bench",
    ]


def test_nothing_is_discovered_on_import_or_help(tmp_path):
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "import core.formats, core.methods, core.judges, core.results\n"
        "from tui.cli import main\n"
        "assert CliRunner().invoke(main, ['--help']).exit_code == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('core.benchmarks')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=child_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_a_broken_or_untyped_entry_point_is_skipped_with_a_warning(monkeypatch):
    points = [
        metadata.EntryPoint("missing", "no_such_package_xyz:BENCHMARK", benchmarks.GROUP),
        metadata.EntryPoint("untyped", "core.registry:Entry", benchmarks.GROUP),
    ]
    monkeypatch.setattr(benchmarks, "_installed", None)
    monkeypatch.setattr(benchmarks, "_entry_points", lambda: points)
    with pytest.warns(UserWarning) as caught:
        names = [b.name for b in benchmarks.installed()]
    assert names == list(benchmarks.BUILTIN)  # built-ins found from their packages even so
    messages = " ".join(str(w.message) for w in caught)
    assert "'missing'" in messages and "'untyped'" in messages
