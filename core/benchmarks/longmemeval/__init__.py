"""LongMemEval: its descriptor (the entries it adds to prefscope's registries). Targets are today's
module paths; nothing is imported until used."""

from core.benchmark import Benchmark, Entry, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="longmemeval",
    title="LongMemEval",
    citation="LongMemEval (xiaowu0162/LongMemEval @9e0b455)",
    formats=(
        Entry(
            "longmemeval", "core.formats.longmemeval", "LongMemEval questions, each with its dated haystack", order=10
        ),
    ),
    methods=(
        MethodInfo(
            "longmemeval",
            "core.methods.longmemeval:direct",
            "LongMemEval's reader prompt over the dated sessions (JSON), direct answer.",
            "LongMemEval",
            "LongMemEval code @9e0b455",
            order=70,
        ),
        MethodInfo(
            "longmemeval-cot",
            "core.methods.longmemeval:step_by_step",
            "LongMemEval's reader prompt, step by step (its default 'con' reading).",
            "LongMemEval",
            "LongMemEval code @9e0b455",
            order=71,
        ),
    ),
    judges=(
        JudgeKind(
            "longmemeval",
            "core.judges.longmemeval:LongMemEvalJudge",
            "LongMemEval QA: the official yes/no prompt per question type, abstention apart (LongMemEval @9e0b455).",
            order=50,
        ),
    ),
    result_formats=(
        Entry(
            "longmemeval",
            "core.results.longmemeval_hypotheses",
            "LongMemEval hypothesis files: {question_id, hypothesis} JSON Lines, against an imported LongMemEval dataset",
            order=20,
        ),
    ),
    report_sections=(
        ReportSection(
            "longmemeval",
            "LongMemEval accuracy",
            "longmemeval",
            "accuracy",
            "core.analysis.longmemeval_metrics:longmemeval_table",
            "per question type, task-averaged, overall and abstention",
            order=10,
        ),
    ),
    profile=Profile(method="longmemeval-cot", judge="longmemeval", factors=("question_type", "model")),
    protocol="../shared/reference/longmemeval/PROTOCOL.md",
)
