"""Re-Centering: its descriptor (the entries it adds to prefscope's registries). Targets are today's
module paths; nothing is imported until used."""

from core.benchmark import Benchmark, JudgeKind, MethodInfo, Profile
from core.registry import LAST

BENCHMARK = Benchmark(
    name="recentering",
    title="Re-Centering",
    citation="Re-Centering (paper §3–6)",
    methods=(
        MethodInfo(
            "recentering",
            "core.methods.recentering:pipeline",
            "Extract attributes → select relevant → generate.",
            "Re-Centering",
            "Re-Centering §3–6",
            steps=3,
            order=50,
        ),
        # The query alone: listed last, as the generic baseline every other method is compared with.
        MethodInfo(
            "generic",
            "core.methods.recentering:generic",
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
            "core.judges.personalization:PersonalizationJudge",
            "Re-Centering: personalised vs generic response, 1–5 (Re-Centering paper §6).",
            order=60,
        ),
    ),
    profile=Profile(method="recentering", judge="personalization"),
    protocol="core/methods/templates/recentering.toml and core/judges/prompts/recentering.toml (with their citations)",
)
