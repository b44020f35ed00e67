"""PrefEval: its descriptor (the entries it adds to prefscope's registries). Targets are today's
module paths; nothing is imported until used."""

from core.benchmark import Benchmark, Entry, JudgeKind, MethodInfo, Profile

BENCHMARK = Benchmark(
    name="prefeval",
    title="PrefEval",
    citation="PrefEval (amazon-science/PrefEval @50795054)",
    formats=(
        Entry(
            "prefeval", "core.formats.prefeval", "PrefEval's benchmark_dataset folder, or one file from it", order=20
        ),
    ),
    methods=(
        MethodInfo(
            "prefeval-zero-shot",
            "core.methods.prefeval:zero_shot",
            "Question + 300-word limit.",
            "PrefEval",
            "PrefEval @50795054 §3.2",
            order=40,
        ),
        MethodInfo(
            "prefeval-remind",
            "core.methods.prefeval:remind",
            "Question + PrefEval's reminder.",
            "PrefEval",
            "PrefEval @50795054 §2.3",
            order=41,
        ),
        MethodInfo(
            "prefeval-cot",
            "core.methods.prefeval:cot",
            "PrefEval's 5 CoT examples + question.",
            "PrefEval",
            "PrefEval @50795054 §2.3",
            order=42,
        ),
        MethodInfo(
            "prefeval-rag",
            "core.methods.prefeval:rag",
            "Top-5 messages block + question.",
            "PrefEval",
            "PrefEval @50795054 §3.4",
            order=43,
        ),
        MethodInfo(
            "self-critic",
            "core.methods.prefeval:self_critic",
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
            "core.judges.taxonomy:TaxonomyJudge",
            "PrefEval error type: the official four checks and labels (PrefEval @50795054).",
            order=40,
        ),
    ),
    result_formats=(
        Entry(
            "prefeval",
            "core.results.prefeval_generation",
            "PrefEval generation results (benchmark_generation.py output, or the SFT folder's files)",
            order=10,
        ),
    ),
    profile=Profile(
        context="prefeval-turns", method="prefeval-zero-shot", judge="taxonomy", factors=("turns", "model")
    ),
    protocol="../shared/reference/prefeval/PROTOCOL.md",
)
