"""PrefEval: its descriptor (the entries it adds to prefscope's registries). Its code lives next to
it in this folder (format, methods, judge, results, answers, templates, prompts); nothing is
imported until used."""

from core.benchmark import Benchmark, Entry, JudgeKind, MethodInfo, Profile

BENCHMARK = Benchmark(
    name="prefeval",
    title="PrefEval",
    citation="PrefEval (amazon-science/PrefEval @50795054)",
    formats=(
        Entry(
            "prefeval",
            "core.benchmarks.prefeval.format",
            "PrefEval's benchmark_dataset folder, or one file from it",
            order=20,
        ),
    ),
    methods=(
        MethodInfo(
            "prefeval-zero-shot",
            "core.benchmarks.prefeval.methods:zero_shot",
            "Question + 300-word limit.",
            "PrefEval",
            "PrefEval @50795054 §3.2",
            order=40,
        ),
        MethodInfo(
            "prefeval-remind",
            "core.benchmarks.prefeval.methods:remind",
            "Question + PrefEval's reminder.",
            "PrefEval",
            "PrefEval @50795054 §2.3",
            order=41,
        ),
        MethodInfo(
            "prefeval-cot",
            "core.benchmarks.prefeval.methods:cot",
            "PrefEval's 5 CoT examples + question.",
            "PrefEval",
            "PrefEval @50795054 §2.3",
            order=42,
        ),
        MethodInfo(
            "prefeval-rag",
            "core.benchmarks.prefeval.methods:rag",
            "Top-5 messages block + question.",
            "PrefEval",
            "PrefEval @50795054 §3.4",
            order=43,
        ),
        MethodInfo(
            "self-critic",
            "core.benchmarks.prefeval.methods:self_critic",
            "Answer, critique against preferences, revise.",
            "PrefEval",
            "PrefEval @50795054 §3.5",
            steps=3,
            order=44,
        ),
    ),
    method_aliases=(
        ("self_critic", "self-critic"),
        ("prefeval-selfcritic", "self-critic"),
        ("prefeval_selfcritic", "self-critic"),
    ),
    judges=(
        JudgeKind(
            "taxonomy",
            "core.benchmarks.prefeval.judge:TaxonomyJudge",
            "PrefEval error type: the official four checks and labels (PrefEval @50795054).",
            order=40,
        ),
    ),
    result_formats=(
        Entry(
            "prefeval",
            "core.benchmarks.prefeval.results",
            "PrefEval generation results (benchmark_generation.py output, or the SFT folder's files)",
            order=10,
        ),
    ),
    method_templates=(("prefeval", "core.benchmarks.prefeval:templates.toml"),),
    judge_prompts=(("prefeval", "core.benchmarks.prefeval:prompts.toml"),),
    answer_formats=(
        Entry(
            "mcq-prefeval",
            "core.benchmarks.prefeval.answers:score",
            "PrefEval's MCQ reading (<choice> tag, first of A-D); an unreadable reply is wrong",
        ),
    ),
    rag_texts="core.benchmarks.prefeval.methods:rag_texts",
    # PrefEval's own default: benchmark_generation.py --inter_turns 5 (reference PROTOCOL.md, its options).
    profile=Profile(
        context="prefeval-turns",
        method="prefeval-zero-shot",
        judge="taxonomy",
        factors=("turns", "model"),
        turns=5,
    ),
    recorded_case="core.benchmarks.prefeval.recorded",
    protocol="core/benchmarks/prefeval/PROTOCOL.md",
)
