"""PersonaMem-v2: its descriptor (the entries it adds to prefscope's registries). Its code lives next
to it in this folder (rows, format, methods, answers, judge, report, results, templates, prompts);
nothing is imported until used."""

from core.benchmark import Benchmark, Entry, ImportOption, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="personamem-v2",
    title="PersonaMem-v2",
    citation="PersonaMem-v2 (bowen-upenn/PersonaMem-v2 inference.py @6a36975f; arXiv 2512.06688)",
    formats=(
        Entry(
            "personamem-v2",
            "core.benchmarks.personamem_v2.format",
            "PersonaMem-v2 benchmark.csv (train/val) with the chat-history JSON files its rows link to",
            order=51,
        ),
    ),
    methods=(
        MethodInfo(
            "personamem-v2",
            "core.benchmarks.personamem_v2.methods:as_sent",
            "PersonaMem-v2's prompt: the history, the query + recall sentence, and for MCQ the options as a "
            "trailing system message (wording ours).",
            "PersonaMem-v2",
            "PersonaMem-v2 inference.py @6a36975f",
            order=82,
        ),
        MethodInfo(
            "personamem-v2-user-roles",
            "core.benchmarks.personamem_v2.methods:user_roles",
            "PersonaMem-v2's prompt as its client sends Claude models: system messages as user, empty ones dropped.",
            "PersonaMem-v2",
            "PersonaMem-v2 query_llm.py @6a36975f",
            order=83,
        ),
    ),
    judges=(
        JudgeKind(
            "personamem-v2-boxed",
            "core.benchmarks.personamem_v2.judge:BoxedJudge",
            "PersonaMem-v2 open-ended score judge (later version): 0-1 score in \\boxed{}, its 'do not' template "
            "(wording ours).",
            order=55,
        ),
        JudgeKind(
            "personamem-v2-vote",
            "core.benchmarks.personamem_v2.judge:VoteJudge",
            "PersonaMem-v2 open-ended yes/no judge (earlier version @a786f0e8): three calls, majority vote "
            "(wording ours).",
            order=56,
        ),
    ),
    result_formats=(
        Entry(
            "personamem-v2",
            "core.benchmarks.personamem_v2.results",
            "PersonaMem-v2 result CSVs (inference.py evaluation_results_*.csv), against an imported PersonaMem-v2 "
            "benchmark",
            order=31,
        ),
    ),
    report_sections=(
        ReportSection(
            "personamem-v2",
            "PersonaMem-v2 MCQ accuracy by distance bin",
            "choice",
            "accuracy",
            "core.benchmarks.personamem_v2.report:mcq_table",
            "accuracy per 1,024-token bin of distance_from_related_snippet_to_query (official summary)",
            order=12,
        ),
        ReportSection(
            "personamem-v2-boxed",
            "PersonaMem-v2 open-ended score by distance bin",
            "personamem-v2-boxed",
            "score",
            "core.benchmarks.personamem_v2.report:boxed_table",
            "mean \\boxed{} judge score per 1,024-token distance bin",
            order=13,
        ),
        ReportSection(
            "personamem-v2-vote",
            "PersonaMem-v2 open-ended vote by distance bin",
            "personamem-v2-vote",
            "accuracy",
            "core.benchmarks.personamem_v2.report:vote_table",
            "majority-vote accuracy per 1,024-token distance bin",
            order=14,
        ),
    ),
    import_options=(
        ImportOption(
            "--histories",
            "histories",
            "the folder PersonaMem-v2's chat_history_*_link paths are relative to (default: the CSV's folder or one "
            "above it).",
        ),
        ImportOption(
            "--history-size",
            "history_size",
            "PersonaMem-v2: import only the 32k or the 128k histories (default: every size the rows link).",
            choices=("32k", "128k"),
        ),
    ),
    method_templates=(("personamem-v2", "core.benchmarks.personamem_v2:templates.toml"),),
    judge_prompts=(("personamem-v2", "core.benchmarks.personamem_v2:prompts.toml"),),
    answer_formats=(
        Entry(
            "mcq-personamem-v2",
            "core.benchmarks.personamem_v2.answers:score",
            "PersonaMem-v2's extract_final_answer (ordered regexes), right iff the option text equals correct_answer",
        ),
        Entry(
            "mcq-personamem-v2-recorded",
            "core.benchmarks.personamem_v2.answers:score_recorded",
            "an imported official PersonaMem-v2 reply: extraction re-run, the file's verdict kept when it agrees",
        ),
    ),
    profile=Profile(context="full", method="personamem-v2", judge="choice", factors=("model",)),
    protocol="core/benchmarks/personamem_v2/PROTOCOL.md",
)
