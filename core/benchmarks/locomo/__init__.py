"""LoCoMo: its descriptor (the entries it adds to prefscope's registries). Its code lives in this
folder (format + format_evidence / format_session, methods + templates.toml, the F1 judge, metrics,
report; results files: LoCoMo's own predictions and mem0's results, with mem0's judge, metrics and
report); targets are strings, so nothing is imported until used."""

from core.benchmark import Benchmark, Entry, FactorLabels, ImportOption, JudgeKind, MethodInfo, Profile, ReportSection

BENCHMARK = Benchmark(
    name="locomo",
    title="LoCoMo",
    citation="LoCoMo (snap-research/locomo @9228632)",
    formats=(
        Entry("locomo", "core.benchmarks.locomo.format", "LoCoMo long two-person conversations with QA", order=40),
    ),
    methods=(
        MethodInfo(
            "locomo-qa",
            "core.benchmarks.locomo.methods:qa",
            "LoCoMo's own QA prompt over the dated conversation.",
            "LoCoMo",
            "LoCoMo code @9228632",
            order=60,
        ),
    ),
    judges=(
        JudgeKind(
            "locomo",
            "core.benchmarks.locomo.judge:LocomoJudge",
            "LoCoMo QA: token F1 per category, as its evaluation code (no model call).",
            needs_model=False,
            order=10,
        ),
        JudgeKind(
            "mem0",
            "core.benchmarks.locomo.judge_mem0:Mem0Judge",
            "mem0's LoCoMo LLM judge (J): its CORRECT/WRONG prompt verbatim, JSON label (mem0 @b3ede5b, Apache-2.0).",
            order=55,
        ),
        JudgeKind(
            "mem0-f1",
            "core.benchmarks.locomo.judge_mem0:Mem0F1Judge",
            "mem0's LoCoMo F1: lower-cased token sets, no stemming (mem0 @b3ede5b; no model call).",
            needs_model=False,
            order=11,
        ),
        JudgeKind(
            "mem0-bleu1",
            "core.benchmarks.locomo.judge_mem0:Mem0Bleu1Judge",
            "mem0's LoCoMo BLEU-1: NLTK sentence_bleu, unigrams, smoothing 1 (mem0 @b3ede5b; no model call).",
            needs_model=False,
            order=12,
        ),
    ),
    result_formats=(
        Entry(
            "locomo",
            "core.benchmarks.locomo.results_locomo",
            "LoCoMo prediction files (evaluate_qa.py: <model>_prediction / _f1 / _recall in each qa record)",
            order=40,
        ),
        Entry(
            "mem0",
            "core.benchmarks.locomo.results_mem0",
            "mem0 LoCoMo results ({conversation: [{question, answer, response, category, *_score}]})",
            order=41,
        ),
    ),
    report_sections=(
        ReportSection(
            "locomo",
            "LoCoMo F1 per category",
            "locomo",
            "f1",
            "core.benchmarks.locomo.report:locomo_table",
            "per category (print order 4, 1, 2, 3, 5) and overall",
            order=20,
        ),
        ReportSection(
            "mem0-j",
            "mem0 LLM judge (J) per category",
            "mem0",
            "accuracy",
            "core.benchmarks.locomo.report_mem0:mem0_j_table",
            "mem0's generate_scores.py: mean per category 1-4 and overall",
            order=21,
        ),
        ReportSection(
            "mem0-f1",
            "mem0 F1 per category",
            "mem0-f1",
            "f1",
            "core.benchmarks.locomo.report_mem0:mem0_f1_table",
            "mem0's generate_scores.py: mean per category 1-4 and overall",
            order=22,
        ),
        ReportSection(
            "mem0-bleu1",
            "mem0 BLEU-1 per category",
            "mem0-bleu1",
            "bleu1",
            "core.benchmarks.locomo.report_mem0:mem0_bleu1_table",
            "mem0's generate_scores.py: mean per category 1-4 and overall",
            order=23,
        ),
    ),
    import_options=(
        ImportOption("--user-speaker", "user_speaker", "whose history it is (default a).", choices=("a", "b")),
    ),
    factor_labels=(FactorLabels("category", "core.benchmarks.locomo.format:CATEGORY_NAMES"),),
    # core.methods.render reads this family by name for the DATE header of any dated session.
    method_templates=(("locomo", "core.benchmarks.locomo:templates.toml"),),
    judge_prompts=(("mem0", "core.benchmarks.locomo:prompts_mem0.toml"),),
    profile=Profile(context="full", method="locomo-qa", judge="locomo", factors=("category", "model")),
    protocol="core/benchmarks/locomo/PROTOCOL.md",
)
