"""Re-Centering: its descriptor (the entries it adds to prefscope's registries). Its code lives next
to it in this folder (methods, judge, templates, prompts); nothing is imported until used. Its judge
prompt family ``recentering`` also serves the workbench's generic attribute and relevance analyses
(core.analysis.attributes / relevance), which ask for it by name."""

from core.benchmark import Benchmark, JudgeKind, MethodInfo, Profile
from core.registry import LAST

BENCHMARK = Benchmark(
    name="recentering",
    title="Re-Centering",
    citation="Re-Centering (paper §3–6)",
    methods=(
        MethodInfo(
            "recentering",
            "core.benchmarks.recentering.methods:pipeline",
            "Extract attributes → select relevant → generate.",
            "Re-Centering",
            "Re-Centering §3–6",
            steps=3,
            order=50,
        ),
        # The query alone: listed last, as the generic baseline every other method is compared with.
        MethodInfo(
            "generic",
            "core.benchmarks.recentering.methods:generic",
            "The query alone, without history (generic response).",
            "Re-Centering",
            "Re-Centering §6",
            uses_history=False,
            order=LAST,
        ),
    ),
    method_aliases=(("re-centering", "recentering"), ("pipeline", "recentering"), ("no-history", "generic")),
    judges=(
        JudgeKind(
            "personalization",
            "core.benchmarks.recentering.judge:PersonalizationJudge",
            "Re-Centering: personalised vs generic response, 1–5 (Re-Centering paper §6).",
            order=60,
        ),
    ),
    method_templates=(("recentering", "core.benchmarks.recentering:templates.toml"),),
    judge_prompts=(("recentering", "core.benchmarks.recentering:prompts.toml"),),
    profile=Profile(method="recentering", judge="personalization"),
    protocol="core/benchmarks/recentering/PROTOCOL.md",
)
