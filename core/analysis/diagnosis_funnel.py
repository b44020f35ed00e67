"""The diagnosis across a grid: how many answers lose the preference at each step, per group.

One row per combination of the factors (default model × expression type × context × method, then
the preference's origin, so generalized preferences are reported apart). Columns: ``n``, the count
of each label in funnel order (:data:`core.analysis.diagnosis.LABELS`), the applied rate, and the
known-not-applied rate = of the answers whose probes all passed and that have a verdict
(``known_n``), the share whose verdict fails (whatever label an earlier step gave them), each
with a Wilson 95% interval (:func:`core.metrics.wilson_ci`). Restraint queries (the preference
should not change the answer) count in ``misapplied`` (dragged in) or ``applied`` (held back); the
misapplied rate is over the restraint answers with a verdict (``restraint_n``), and they are left
out of the known-not-applied rate (their "applied" step asks the opposite question).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from core.analysis.diagnosis import APPLIED, LABELS, MISAPPLIED, Answer, Diagnosis
from core.analysis.report import ReportTable
from core.metrics import wilson_ci

DEFAULT_FACTORS = ("model", "expression_type", "context", "method")
#: Read from a case, or from the run's spec through ``extra`` (expression type).
ORIGIN = "origin"


def factor_value(case: Answer, extra: dict[str, Any], name: str) -> Any:
    if name == ORIGIN:
        return case.origin or "n/a"
    if name in extra:
        return extra[name]
    return getattr(case, name, None)


def funnel_table(
    items: Iterable[tuple[Answer, Diagnosis, dict[str, Any]]], factors: Sequence[str] = DEFAULT_FACTORS
) -> ReportTable:
    """``items``: (answer, its diagnosis, other factor values such as ``expression_type``), read once."""
    by = [*factors, ORIGIN] if ORIGIN not in factors else list(factors)
    groups: dict[tuple[Any, ...], list[Diagnosis]] = defaultdict(list)
    for case, diagnosis, extra in items:
        groups[tuple(factor_value(case, extra, f) for f in by)].append(diagnosis)
    columns = [
        *by,
        "n",
        *LABELS,
        "applied_rate",
        "ci_low",
        "ci_high",
        "known_n",
        "known_not_applied_rate",
        "kna_ci_low",
        "kna_ci_high",
        "restraint_n",
        "misapplied_rate",
        "mis_ci_low",
        "mis_ci_high",
    ]
    rows = []
    for key in sorted(groups, key=lambda k: tuple((v is None, str(v)) for v in k)):
        ds = groups[key]
        counts = {label: sum(1 for d in ds if d.category == label) for label in LABELS}
        n = len(ds)
        lo, hi = wilson_ci(counts[APPLIED], n)
        # answers whose probes passed and that have a verdict; of those, the ones not applied
        verdicts = [d.step("applied").status for d in ds if d.known == "pass" and not d.restraint]
        known = sum(1 for v in verdicts if v in ("pass", "fail"))
        kna = sum(1 for v in verdicts if v == "fail")
        klo, khi = wilson_ci(kna, known)
        restraint = sum(1 for d in ds if d.restraint and d.step("applied").status in ("pass", "fail"))
        mlo, mhi = wilson_ci(counts[MISAPPLIED], restraint)
        rows.append(
            [
                *key,
                n,
                *(counts[label] for label in LABELS),
                counts[APPLIED] / n if n else None,
                lo,
                hi,
                known,
                kna / known if known else None,
                klo,
                khi,
                restraint,
                counts[MISAPPLIED] / restraint if restraint else None,
                mlo,
                mhi,
            ]
        )
    return ReportTable(
        title="Diagnosis: where answers lose the preference (find → know → apply)",
        columns=columns,
        rows=rows,
        value_column="applied_rate",
        scale=(0.0, 1.0),
        notes=[
            "counts per label in funnel order; rates with Wilson 95% intervals",
            "known_not_applied_rate: of the answers whose probes all passed and that have a verdict (known_n), "
            "the share not applied",
            "origin: generalized preferences are reported apart from original ones",
            "misapplied: a restraint query's answer (its gold: the preference is irrelevant) that drags the "
            "preference in; misapplied_rate over the restraint answers with a verdict (restraint_n)",
        ],
    )
