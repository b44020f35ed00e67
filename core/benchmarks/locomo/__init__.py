"""LoCoMo: its descriptor (the entries it adds to prefscope's registries). Targets are today's
module paths; nothing is imported until used."""

from core.benchmark import Benchmark, Entry, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="locomo",
    title="LoCoMo",
    citation="LoCoMo (snap-research/locomo @9228632)",
    formats=(Entry("locomo", "core.formats.locomo", "LoCoMo long two-person conversations with QA", order=40),),
    methods=(
        MethodInfo(
            "locomo-qa",
            "core.methods.locomo:qa",
            "LoCoMo's own QA prompt over the dated conversation.",
            "LoCoMo",
            "LoCoMo code @9228632",
            order=60,
        ),
    ),
    judges=(
        JudgeKind(
            "locomo",
            "core.judges.locomo_qa:LocomoJudge",
            "LoCoMo QA: token F1 per category, as its evaluation code (no model call).",
            needs_model=False,
            order=10,
        ),
    ),
    report_sections=(
        ReportSection(
            "locomo",
            "LoCoMo F1 per category",
            "locomo",
            "f1",
            "core.analysis.locomo_metrics:locomo_table",
            "per category (print order 4, 1, 2, 3, 5) and overall",
            order=20,
        ),
    ),
    profile=Profile(method="locomo-qa", judge="locomo", factors=("category", "model")),
    protocol="../shared/reference/locomo/PROTOCOL.md",
)
