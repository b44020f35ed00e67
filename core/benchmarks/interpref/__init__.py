"""InterPref: its descriptor (the entries it adds to prefscope's registries). Targets are today's
module paths; nothing is imported until used."""

from core.benchmark import Benchmark, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="interpref",
    title="InterPref",
    citation="InterPref (paper §4.3, Fig. 14, App. E)",
    methods=(
        MethodInfo(
            "np",
            "core.methods.interpref:no_prompt",
            "No prompt: the vanilla model with the history.",
            "InterPref",
            "InterPref §4.3",
            order=20,
        ),
        MethodInfo(
            "td",
            "core.methods.interpref:task_description",
            "Task-description system prompt.",
            "InterPref",
            "InterPref §4.3, Fig. 14",
            order=21,
        ),
        MethodInfo(
            "cot",
            "core.methods.interpref:chain_of_thought",
            "Task description + persona-then-answer reasoning.",
            "InterPref",
            "InterPref §4.3, Fig. 14",
            order=22,
        ),
        MethodInfo(
            "workflow",
            "core.methods.interpref:workflow",
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
            "core.judges.pairwise:PairwiseJudge",
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
            "core.analysis.report:pass_table",
            "all 4 swapped orders right; chance 6.25%",
            flag="interpref",
            order=40,
        ),
        ReportSection(
            "interpref-bradley-terry",
            "InterPref Bradley–Terry",
            "pairwise",
            "win",
            "core.analysis.report:bradley_terry_section",
            "win rate and Bradley–Terry coefficient per model",
            factors=(),
            flag="interpref",
            order=41,
        ),
    ),
    profile=Profile(method="np", judge="pairwise", factors=("model",)),
    protocol="core/methods/templates/interpref.toml and core/judges/prompts/interpref.toml (with their citations)",
)
