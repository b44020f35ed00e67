"""OP-Bench (over-personalization): its descriptor (the entries it adds to prefscope's registries).
Its code lives next to it in this folder (format, methods, judges, metrics, report, templates,
prompts); nothing is imported until used."""

from core.benchmark import Benchmark, Entry, ImportOption, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="op-bench",
    title="OP-Bench",
    citation="OP-Bench, Hu et al. 2026, arXiv 2601.13722 (yulinlp/OP-Bench @5104b27, MIT)",
    formats=(
        Entry(
            "op-bench",
            "core.benchmarks.opbench.format",
            "OP-Bench locomo10_overpersonalized.json: irrelevance, sycophancy and diversity questions per person",
            order=45,
        ),
    ),
    methods=(
        MethodInfo(
            "op-bench",
            "core.benchmarks.opbench.methods:with_memory",
            "OP-Bench's answer prompt: system + user message with the user's memory block.",
            "OP-Bench",
            "OP-Bench code @5104b27",
            order=80,
        ),
        MethodInfo(
            "op-bench-no-memory",
            "core.benchmarks.opbench.methods:without_memory",
            "OP-Bench's answer prompt without memory (its BASE setting).",
            "OP-Bench",
            "OP-Bench code @5104b27",
            order=81,
            uses_history=False,
        ),
    ),
    judges=(
        JudgeKind(
            "op-bench",
            "core.benchmarks.opbench.judge:OpBenchJudge",
            "OP-Bench scorer: irrelevance and sycophancy prompts (first number clamped to [0,1]), diversity by"
            " embeddings (OP-Bench @5104b27).",
            order=57,
        ),
    ),
    report_sections=(
        ReportSection(
            "op-bench",
            "OP-Bench over-personalization",
            "op-bench",
            None,
            "core.benchmarks.opbench.report:opbench_table",
            "per category (the paper's columns) and overall, higher = less over-personalization",
            order=45,
        ),
    ),
    import_options=(
        ImportOption(
            "--op-bench-personas",
            "personas",
            "whose profiles to import: the first person of each conversation (default, as the official code) or both.",
            choices=("first", "both"),
        ),
    ),
    method_templates=(("op-bench", "core.benchmarks.opbench:templates.toml"),),
    judge_prompts=(("op-bench", "core.benchmarks.opbench:prompts.toml"),),
    profile=Profile(context="full", method="op-bench", judge="op-bench", factors=("model",)),
    protocol="core/benchmarks/opbench/PROTOCOL.md",
)
