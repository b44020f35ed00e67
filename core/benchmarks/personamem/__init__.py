"""PersonaMem: its descriptor (the entries it adds to prefscope's registries). Targets are today's
module paths; nothing is imported until used."""

from core.benchmark import Benchmark, Entry, MethodInfo, Profile

BENCHMARK = Benchmark(
    name="personamem",
    title="PersonaMem",
    citation="PersonaMem (bowen-upenn/PersonaMem @041d82ac)",
    formats=(
        Entry(
            "personamem",
            "core.formats.personamem",
            "PersonaMem questions_<size>.csv with its shared_contexts_<size>.jsonl (or a folder of them)",
            order=50,
        ),
    ),
    methods=(
        MethodInfo(
            "personamem",
            "core.methods.personamem:as_sent",
            "PersonaMem's MCQ prompt: the context's messages as they are, then question + instruction + options.",
            "PersonaMem",
            "PersonaMem code @041d82ac",
            order=80,
        ),
        MethodInfo(
            "personamem-merged",
            "core.methods.personamem:merged",
            "PersonaMem's MCQ prompt with system messages merged (what it sends to models named with 'o').",
            "PersonaMem",
            "PersonaMem code @041d82ac",
            order=81,
        ),
    ),
    result_formats=(
        Entry(
            "personamem",
            "core.results.personamem_results",
            "PersonaMem result CSVs (inference_standalone_openai.py output), against an imported PersonaMem dataset",
            order=30,
        ),
    ),
    profile=Profile(method="personamem", judge="choice", factors=("question_type", "model")),
    protocol="../shared/reference/personamem/PROTOCOL.md",
)
