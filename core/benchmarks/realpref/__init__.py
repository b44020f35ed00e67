"""RealPref: its descriptor (the entries it adds to prefscope's registries). Its code lives in this
folder (methods + templates.toml, the rubric judge + prompts.toml); targets are strings, so nothing
is imported until used. The heuristic judge and the RealPref-style contexts stay generic."""

from core.benchmark import Benchmark, JudgeKind, MethodInfo, Profile

BENCHMARK = Benchmark(
    name="realpref",
    title="RealPref",
    citation="RealPref: preference following over long user histories (paper, App. B.2 / C.2)",
    methods=(
        MethodInfo(
            "zero-shot",
            "core.benchmarks.realpref.methods:zero_shot",
            "History, then the question; no help.",
            "RealPref",
            "RealPref §4 (Methods)",
            order=10,
        ),
        MethodInfo(
            "reminder",
            "core.benchmarks.realpref.methods:reminder",
            "One reminder sentence before the question.",
            "RealPref",
            "RealPref App. C.2",
            order=11,
        ),
        MethodInfo(
            "fewshot-cot",
            "core.benchmarks.realpref.methods:fewshot_cot",
            "Reminder + 3 worked examples + closing instruction.",
            "RealPref",
            "RealPref App. C.2",
            order=12,
        ),
        MethodInfo(
            "rag",
            "core.benchmarks.realpref.methods:rag",
            "Reminder + top-k history turns most similar to the question.",
            "RealPref",
            "RealPref App. C.2",
            order=13,
        ),
    ),
    method_aliases=(
        ("zero_shot", "zero-shot"),
        ("zeroshot", "zero-shot"),
        ("fewshot", "fewshot-cot"),
        ("few-shot-cot", "fewshot-cot"),
        ("fewshot_cot", "fewshot-cot"),
        ("few-shot", "fewshot-cot"),
    ),
    judges=(
        JudgeKind(
            "rubric",
            "core.benchmarks.realpref.judge:RubricJudge",
            "RealPref rubric: awareness, alignment, quality 1–5, one LLM call each (RealPref paper App. B.2).",
            order=20,
        ),
    ),
    method_templates=(("realpref", "core.benchmarks.realpref:templates.toml"),),
    # Found by family name: the annotate screen shows these criteria (human scores are kind `rubric`).
    judge_prompts=(("realpref_rubric", "core.benchmarks.realpref:prompts.toml"),),
    profile=Profile(context="simple", method="zero-shot", judge="rubric", factors=("expression_type", "model")),
    protocol="core/benchmarks/realpref/PROTOCOL.md",
)
