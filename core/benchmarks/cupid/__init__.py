"""CUPID: its descriptor (the entries it adds to prefscope's registries). Its code lives in this
folder (format, methods + templates.toml, judge_checklist / judge_matching + prompts.toml, parsing,
metrics, report, render); targets are strings, so nothing is imported until used."""

from core.benchmark import Benchmark, Entry, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="cupid",
    title="CUPID",
    citation="CUPID (kixlab/CUPID @a8560ca; paper §4.2.3)",
    formats=(
        Entry("cupid", "core.benchmarks.cupid.format", "CUPID instances (JSON, JSON Lines or a folder)", order=30),
    ),
    methods=(
        MethodInfo(
            "cupid-generate",
            "core.benchmarks.cupid.methods:generation",
            "Response from the interaction log.",
            "CUPID",
            "CUPID repo response_generator.yaml @a8560ca",
            order=30,
        ),
        MethodInfo(
            "cupid-infer",
            "core.benchmarks.cupid.methods:inference",
            "Infer the user's preference (≤30 words).",
            "CUPID",
            "CUPID repo preference_inferrer.yaml @a8560ca",
            order=31,
        ),
        MethodInfo(
            "summary-memory",
            "core.benchmarks.cupid.methods:summary_memory",
            "Summarise every session, then answer from the summaries.",
            "CUPID",
            "CUPID §4.2.3, Figs 23+22",
            steps=2,
            order=32,
        ),
    ),
    method_aliases=(
        ("generation", "cupid-generate"),
        ("cupid_generate", "cupid-generate"),
        ("inference", "cupid-infer"),
        ("cupid_infer", "cupid-infer"),
        ("summary_memory", "summary-memory"),
    ),
    judges=(
        JudgeKind(
            "checklist",
            "core.benchmarks.cupid.judge_checklist:ChecklistJudge",
            "CUPID 1–10 preference score with the checklist (CUPID repo response_judger.yaml @a8560ca).",
            order=30,
        ),
        JudgeKind(
            "matching",
            "core.benchmarks.cupid.judge_matching:PreferenceMatchingJudge",
            "CUPID preference matching of an inferred preference: P/R/F1 (CUPID repo @a8560ca).",
            order=31,
        ),
    ),
    report_sections=(
        ReportSection(
            "cupid-matching",
            "CUPID preference matching",
            "matching",
            "precision",
            "core.benchmarks.cupid.report:matching_table",
            "micro-averaged P/R/F1 (LLM judges only)",
            factors=("instance_type",),
            flag="cupid",
            order=30,
        ),
        ReportSection(
            "cupid-generation",
            "CUPID generation average",
            "checklist",
            "preference",
            "core.benchmarks.cupid.report:cupid_generation_table",
            "checklist-judge average, 0s counted",
            factors=("instance_type",),
            flag="cupid",
            order=31,
        ),
    ),
    method_templates=(("cupid", "core.benchmarks.cupid:templates.toml"),),
    judge_prompts=(("cupid", "core.benchmarks.cupid:prompts.toml"),),
    profile=Profile(context="full", method="cupid-generate", judge="checklist", factors=("instance_type",)),
    protocol="core/benchmarks/cupid/PROTOCOL.md",
)
