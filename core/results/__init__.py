"""Results produced elsewhere ("bring your own results"): parse answer files into
:class:`~core.results.model.ImportedAnswer` objects. Pure: nothing is stored here;
``storage/imported_runs.py`` turns them into stored runs in one transaction.

Adding a format is one module in this package and one :class:`~core.registry.Entry` line in
:data:`RESULT_FORMATS` (detection tries them in that order; ``--format`` skips detection).

A result-format module exposes:

* ``NAME: str``;
* ``detect(path: Path) -> bool`` — cheap (names, first bytes / first record), never raises;
* ``load(path: Path, max_bytes: int) -> ResultsImport`` — raises ``core.formats.FormatError``
  naming file, record (``record 3`` / ``line 4``) and field for anything it cannot read.

Each ``ImportedAnswer`` says how storage finds the user and query it answers, first rule that
applies wins:

1. ``user_id`` + ``query_id``: exact stored ids (generic JSONL; a LongMemEval hypothesis file can
   set the ids its dataset importer gives, e.g. the user/query made from ``question_id``);
2. ``match_meta``: ``Query.meta`` values (PersonaMem's question_id, persona_id and size) that
   pick exactly one stored query; several or none fail the import, naming the record;
3. ``match``: ``{"preference": …, "question": …}`` texts, matched against stored users'
   preference text and open-query text (PrefEval generation files);
4. ``fallback``: a minimal ``UserBundle`` stored when nothing matched (its query is
   ``fallback_query_id``); without one an unmatched answer fails the whole import, naming its record.

``source_sha256`` + ``record`` (+ model, method, context, turns) make the stored run id
deterministic (``storage.imported_runs.imported_run_id``), so importing the same file twice adds
nothing. ``turns`` (inter turns) is what ``prefscope report --by turns`` groups by.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, refuse_special
from core.registry import LAST, Entry, Registry, merged
from core.results.model import ImportedAnswer, ResultsImport


def _gather() -> tuple[list[Entry], dict[str, str]]:
    from core import benchmark as benchmarks

    generic = Entry(
        "jsonl",
        "core.results.generic_jsonl",
        "generic JSON Lines: user, query, model, answer (+ messages …)",
        order=LAST,
    )
    eee = Entry("eee", "core.results.eee", "Every Eval Ever 0.3.0 / 0.2.x: <uuid>.json + <uuid>_samples.jsonl")
    inspect = Entry(
        "inspect", "core.results.inspect_log", "Inspect (inspect_ai) logs: .eval or .json, with their scores"
    )
    lm_eval = Entry(
        "lm-eval", "core.results.lm_eval", "lm-evaluation-harness --log_samples: results_*.json + samples_*.jsonl"
    )
    batch = Entry(
        "openai-batch",
        "core.results.openai_batch_results",
        "OpenAI Batch API: input + output/error .jsonl joined on custom_id",
    )
    evals = Entry("openai-evals", "core.results.openai_evals", "OpenAI Evals {item, sample} JSON Lines")
    return merged([[eee, inspect, lm_eval, batch, evals, generic], *benchmarks.entries("result_formats")]), {}


#: Most specific first: the benchmarks' formats (:mod:`core.benchmarks`), then the cross-framework ones
#: (Every Eval Ever, Inspect, lm-eval, OpenAI Batch and Evals) and generic JSON Lines.
RESULT_FORMATS: Registry[Entry] = Registry.deferred(_gather)


def result_format_names() -> list[str]:
    return list(RESULT_FORMATS)


def result_format(name: str) -> ModuleType:
    entry = RESULT_FORMATS.get(name)
    if entry is None:
        raise FormatError(name, f"unknown results format; expected one of {', '.join(RESULT_FORMATS)}")
    return entry.load()


def detect_result_format(path: Path) -> str:
    for name in RESULT_FORMATS:
        if result_format(name).detect(path):
            return name
    raise FormatError(path.name, f"cannot tell the results format; pass --format ({', '.join(RESULT_FORMATS)})")


def load_results(path: str | Path, format: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    """Read a results file or folder. Raises FormatError; never writes anything."""
    path = Path(path)
    if not path.exists():
        raise FormatError(str(path), "no such file or folder")
    refuse_special(path)  # before detection opens it: a FIFO blocks, /dev/zero never ends
    name = format or detect_result_format(path)
    result = result_format(name).load(path, max_bytes)
    if not result.answers:
        raise FormatError(path.name, "no answers found")
    return result


__all__ = [
    "RESULT_FORMATS",
    "FormatError",
    "ImportedAnswer",
    "ResultsImport",
    "detect_result_format",
    "load_results",
    "result_format",
    "result_format_names",
]
