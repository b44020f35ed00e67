"""InterPref: its descriptor (the entries it adds to prefscope's registries). Its code lives in this
folder (methods + templates.toml, the pairwise judge + prompts.toml, metrics, report); targets are
strings, so nothing is imported until used."""

from core.benchmark import Benchmark, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="interpref",
    title="InterPref",
    citation="InterPref (paper §4.3, Fig. 14, App. E)",
    methods=(
        MethodInfo(
            "np",
            "core.benchmarks.interpref.methods:no_prompt",
            "No prompt: the vanilla model with the history.",
            "InterPref",
            "InterPref §4.3",
            order=20,
        ),
        MethodInfo(
            "td",
            "core.benchmarks.interpref.methods:task_description",
            "Task-description system prompt.",
            "InterPref",
            "InterPref §4.3, Fig. 14",
            order=21,
        ),
        MethodInfo(
            "cot",
            "core.benchmarks.interpref.methods:chain_of_thought",
            "Task description + persona-then-answer reasoning.",
            "InterPref",
            "InterPref §4.3, Fig. 14",
            order=22,
        ),
        MethodInfo(
            "workflow",
            "core.benchmarks.interpref.methods:workflow",
            "Two calls: relevant preferences from history, then answer.",
            "InterPref",
            "InterPref §4.3, App. E",
            steps=2,
            order=23,
        ),
    ),
    method_aliases=(("no-prompt", "np"), ("wf", "workflow")),
    judges=(
        JudgeKind(
            "pairwise",
            "core.benchmarks.interpref.judge:PairwiseJudge",
            "InterPref pass and win rate of two answers (`prefscope pairwise`).",
            per_response=False,
            order=70,
        ),
    ),
    report_sections=(
        ReportSection(
            "interpref-pass",
            "InterPref pass rate",
            "pairwise",
            "pass",
            "core.benchmarks.interpref.report:pass_table",
            "all 4 swapped orders right; chance 6.25%",
            flag="interpref",
            order=40,
        ),
        ReportSection(
            "interpref-bradley-terry",
            "InterPref Bradley–Terry",
            "pairwise",
            "win",
            "core.benchmarks.interpref.report:bradley_terry_section",
            "win rate and Bradley–Terry coefficient per model",
            factors=(),
            flag="interpref",
            order=41,
        ),
    ),
    method_templates=(("interpref", "core.benchmarks.interpref:templates.toml"),),
    judge_prompts=(("interpref", "core.benchmarks.interpref:prompts.toml"),),
    profile=Profile(method="np", judge="pairwise", factors=("model",)),
    protocol="core/benchmarks/interpref/PROTOCOL.md",
)
