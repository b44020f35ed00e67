"""RealPref: its descriptor (the entries it adds to prefscope's registries). Targets are today's
module paths; nothing is imported until used."""

from core.benchmark import Benchmark, JudgeKind, MethodInfo, Profile

BENCHMARK = Benchmark(
    name="realpref",
    title="RealPref",
    citation="RealPref: preference following over long user histories (paper, App. B.2 / C.2)",
    methods=(
        MethodInfo(
            "zero-shot",
            "core.methods.realpref:zero_shot",
            "History, then the question; no help.",
            "RealPref",
            "RealPref §4 (Methods)",
            order=10,
        ),
        MethodInfo(
            "reminder",
            "core.methods.realpref:reminder",
            "One reminder sentence before the question.",
            "RealPref",
            "RealPref App. C.2",
            order=11,
        ),
        MethodInfo(
            "fewshot-cot",
            "core.methods.realpref:fewshot_cot",
            "Reminder + 3 worked examples + closing instruction.",
            "RealPref",
            "RealPref App. C.2",
            order=12,
        ),
        MethodInfo(
            "rag",
            "core.methods.realpref:rag",
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
            "core.judges.rubric:RubricJudge",
            "RealPref rubric: awareness, alignment, quality 1–5, one LLM call each (RealPref paper App. B.2).",
            order=20,
        ),
    ),
    profile=Profile(context="simple", method="zero-shot", judge="rubric", factors=("expression_type", "model")),
    protocol="core/methods/templates/realpref.toml and core/judges/prompts/realpref_rubric.toml (with their citations)",
)
