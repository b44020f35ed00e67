"""PersonaMem: its descriptor (the entries it adds to prefscope's registries). Its code lives next
to it in this folder (format, methods, answers, results, templates); nothing is imported until used."""

from core.benchmark import Benchmark, Entry, ImportOption, MethodInfo, Profile

BENCHMARK = Benchmark(
    name="personamem",
    title="PersonaMem",
    citation="PersonaMem (bowen-upenn/PersonaMem @041d82ac)",
    formats=(
        Entry(
            "personamem",
            "core.benchmarks.personamem.format",
            "PersonaMem questions_<size>.csv with its shared_contexts_<size>.jsonl (or a folder of them)",
            order=50,
        ),
    ),
    methods=(
        MethodInfo(
            "personamem",
            "core.benchmarks.personamem.methods:as_sent",
            "PersonaMem's MCQ prompt: the context's messages as they are, then question + instruction + options.",
            "PersonaMem",
            "PersonaMem code @041d82ac",
            order=80,
        ),
        MethodInfo(
            "personamem-merged",
            "core.benchmarks.personamem.methods:merged",
            "PersonaMem's MCQ prompt with system messages merged (what it sends to models named with 'o').",
            "PersonaMem",
            "PersonaMem code @041d82ac",
            order=81,
        ),
    ),
    result_formats=(
        Entry(
            "personamem",
            "core.benchmarks.personamem.results",
            "PersonaMem result CSVs (inference_standalone_openai.py output), against an imported PersonaMem dataset",
            order=30,
        ),
    ),
    method_templates=(("personamem", "core.benchmarks.personamem:templates.toml"),),
    answer_formats=(
        Entry(
            "mcq-personamem",
            "core.benchmarks.personamem.answers:score",
            "PersonaMem's extract_answer: exactly the correct letter after <final_answer>, else wrong",
        ),
    ),
    import_options=(
        ImportOption(
            "--contexts",
            "contexts",
            "the shared_contexts_<size>.jsonl of the questions CSV (default: the one beside it).",
        ),
    ),
    profile=Profile(context="full", method="personamem", judge="choice", factors=("question_type", "model")),
    protocol="core/benchmarks/personamem/PROTOCOL.md",
)
