"""LongMemEval: its descriptor (the entries it adds to prefscope's registries). Its code lives next
to it in this folder (format, methods, judge, results, metrics, report, templates, prompts); nothing
is imported until used."""

from core.benchmark import Benchmark, Entry, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="longmemeval",
    title="LongMemEval",
    citation="LongMemEval (xiaowu0162/LongMemEval @9e0b455)",
    formats=(
        Entry(
            "longmemeval-cleaned",
            "core.benchmarks.longmemeval.format_cleaned",
            "LongMemEval's cleaned release (longmemeval_s_cleaned.json / _m_cleaned.json): the same"
            " questions, users of their own (longmemeval-cleaned-<question_id>)",
            order=9,
        ),
        Entry(
            "longmemeval",
            "core.benchmarks.longmemeval.format",
            "LongMemEval questions, each with its dated haystack",
            order=10,
        ),
    ),
    methods=(
        MethodInfo(
            "longmemeval",
            "core.benchmarks.longmemeval.methods:direct",
            "LongMemEval's reader prompt over the dated sessions (JSON), direct answer.",
            "LongMemEval",
            "LongMemEval code @9e0b455",
            order=70,
        ),
        MethodInfo(
            "longmemeval-cot",
            "core.benchmarks.longmemeval.methods:step_by_step",
            "LongMemEval's reader prompt, step by step (its default 'con' reading).",
            "LongMemEval",
            "LongMemEval code @9e0b455",
            order=71,
        ),
    ),
    judges=(
        JudgeKind(
            "longmemeval",
            "core.benchmarks.longmemeval.judge:LongMemEvalJudge",
            "LongMemEval QA: the official yes/no prompt per question type, abstention apart (LongMemEval @9e0b455).",
            order=50,
        ),
    ),
    result_formats=(
        Entry(
            "longmemeval-cleaned",
            "core.benchmarks.longmemeval.results_cleaned",
            "LongMemEval hypothesis files and judge logs of runs on the cleaned release ('cleaned' in the file name)",
            order=19,
        ),
        Entry(
            "longmemeval",
            "core.benchmarks.longmemeval.results",
            "LongMemEval hypothesis files ({question_id, hypothesis} JSON Lines) and evaluate_qa.py judge logs"
            " (*.eval-results-<judge>: autoeval_label as a recorded judgment); placeholder questions until"
            " the dataset is imported",
            order=20,
        ),
    ),
    report_sections=(
        ReportSection(
            "longmemeval",
            "LongMemEval accuracy",
            "longmemeval",
            "accuracy",
            "core.benchmarks.longmemeval.report:longmemeval_table",
            "per question type, task-averaged, overall and abstention; judged here or recorded (judge logs)",
            factors=("model", "question_type", "user"),
            order=10,
        ),
    ),
    method_templates=(("longmemeval", "core.benchmarks.longmemeval:templates.toml"),),
    judge_prompts=(("longmemeval", "core.benchmarks.longmemeval:prompts.toml"),),
    profile=Profile(context="full", method="longmemeval-cot", judge="longmemeval", factors=("question_type", "model")),
    protocol="core/benchmarks/longmemeval/PROTOCOL.md",
)
