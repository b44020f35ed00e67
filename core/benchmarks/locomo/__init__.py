"""LoCoMo: its descriptor (the entries it adds to prefscope's registries). Its code lives in this
folder (format + format_evidence / format_session, methods + templates.toml, the F1 judge, metrics,
report); targets are strings, so nothing is imported until used."""

from core.benchmark import Benchmark, Entry, FactorLabels, ImportOption, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="locomo",
    title="LoCoMo",
    citation="LoCoMo (snap-research/locomo @9228632)",
    formats=(
        Entry("locomo", "core.benchmarks.locomo.format", "LoCoMo long two-person conversations with QA", order=40),
    ),
    methods=(
        MethodInfo(
            "locomo-qa",
            "core.benchmarks.locomo.methods:qa",
            "LoCoMo's own QA prompt over the dated conversation.",
            "LoCoMo",
            "LoCoMo code @9228632",
            order=60,
        ),
    ),
    judges=(
        JudgeKind(
            "locomo",
            "core.benchmarks.locomo.judge:LocomoJudge",
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
            "core.benchmarks.locomo.report:locomo_table",
            "per category (print order 4, 1, 2, 3, 5) and overall",
            order=20,
        ),
    ),
    import_options=(
        ImportOption("--user-speaker", "user_speaker", "whose history it is (default a).", choices=("a", "b")),
    ),
    factor_labels=(FactorLabels("category", "core.benchmarks.locomo.format:CATEGORY_NAMES"),),
    # core.methods.render reads this family by name for the DATE header of any dated session.
    method_templates=(("locomo", "core.benchmarks.locomo:templates.toml"),),
    profile=Profile(context="full", method="locomo-qa", judge="locomo", factors=("category", "model")),
    protocol="core/benchmarks/locomo/PROTOCOL.md",
)
