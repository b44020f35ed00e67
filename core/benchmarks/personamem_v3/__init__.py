"""PersonaMem-v3 (its chatbot-response task): its descriptor (the entries it adds to prefscope's
registries). Its code lives next to it in this folder (events, slice, metrics, semantic, format,
methods, judge, report, results, templates); nothing is imported until used."""

from core.benchmark import Benchmark, Entry, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="personamem-v3",
    title="PersonaMem-v3 (chatbot response)",
    citation="PersonaMem-v3 (bowen-upenn/PersonaMem-v3, MIT; metrics.py @a24ea9ce, prompts.py @dc56d425; "
    "arXiv 2608.21381)",
    formats=(
        Entry(
            "personamem-v3",
            "core.benchmarks.personamem_v3.format",
            "PersonaMem-v3 backend/{uid}/ persona folders (profile, app events, test.json): the chatbot-response task",
            order=52,
        ),
    ),
    methods=(
        MethodInfo(
            "personamem-v3",
            "core.benchmarks.personamem_v3.methods:as_sent",
            "PersonaMem-v3's chatbot-response prompt (control prompt on restraint arms), verbatim; history "
            "serialisation ours.",
            "PersonaMem-v3",
            "PersonaMem-v3 evaluation/prompts.py @dc56d425",
            order=84,
        ),
    ),
    judges=(
        JudgeKind(
            "pmv3-slice",
            "core.benchmarks.personamem_v3.judge:SliceJudge",
            "PersonaMem-v3 TARGET/AVOID slice metrics (held-out hit, leak rate; no model): hashtag overlap or "
            "all-MiniLM-L6-v2 cosine, threshold 0.5 (metrics.py @a24ea9ce).",
            needs_model=False,
            order=59,
        ),
        JudgeKind(
            "pmv3-slice-jaccard",
            "core.benchmarks.personamem_v3.judge:JaccardSliceJudge",
            "PersonaMem-v3 slice metrics with the official fallback (token Jaccard instead of MiniLM), for "
            "comparison with runs made without sentence-transformers.",
            needs_model=False,
            order=59.5,
        ),
    ),
    result_formats=(
        Entry(
            "personamem-v3",
            "core.benchmarks.personamem_v3.results",
            "PersonaMem-v3 run_eval.py results.csv (one row per query, metrics_json recorded)",
            order=32,
        ),
    ),
    report_sections=(
        ReportSection(
            "personamem-v3",
            "PersonaMem-v3 held-out hit and leak by distance bin",
            "pmv3-slice",
            None,
            "core.benchmarks.personamem_v3.report:slice_table",
            "held-out hit rate and AVOID leak rate per 1,024-wide distance_bin (chatbot-response task)",
            order=15,
        ),
        ReportSection(
            "personamem-v3-jaccard",
            "PersonaMem-v3 held-out hit and leak by distance bin (Jaccard fallback)",
            "pmv3-slice-jaccard",
            None,
            "core.benchmarks.personamem_v3.report:jaccard_table",
            "the same with the official token-Jaccard fallback",
            order=16,
        ),
    ),
    method_templates=(("personamem-v3", "core.benchmarks.personamem_v3:templates.toml"),),
    profile=Profile(context="full", method="personamem-v3", judge="pmv3-slice", factors=("model",)),
    protocol="core/benchmarks/personamem_v3/PROTOCOL.md",
)
