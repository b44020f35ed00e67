"""Knowledge probes: after an answer to an open query, ask the same models, in the same context and
method, whether they KNOW the preference (the "know" step of the find → know → apply diagnosis,
:mod:`core.analysis.diagnosis`).

The probes of a query are its data's MCQ and true/false queries on the same item, else one
generated probe (:meth:`core.model.UserBundle.probes_of`). Each probe is an ordinary run whose
spec is the probed run's with the probe's query, ``probe_of`` = the probed run's id and the
label ``probe:<label>`` (so a batch's report never counts probes as cells); its answers pair with
the probed answers by model. MCQ/TF probes are scored by the ``choice`` parser, generated ones by
``probe-recall``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from core.judges.base import Judge
from core.model import PROBE_PREFIX, UserBundle
from core.plan import PromptPlan
from core.run.engine import Engine
from core.run.spec import RunSpec

LABEL_PREFIX = "probe:"
RECALL_JUDGE = "probe-recall"


def probe_label(label: str) -> str:
    return LABEL_PREFIX + label if label else "probe"


def probe_specs(spec: RunSpec, run_id: str, bundle: UserBundle, models: Sequence[str] | None = None) -> list[RunSpec]:
    """One spec per probe of ``spec``'s query, for the models named (default: all of the run's).
    Empty for a query that is not open, has no preference to know, or when no model is left."""
    query = bundle.query(spec.query_id)
    chosen = [m for m in spec.models if models is None or m.id in models]
    if not chosen:
        return []
    out = []
    for probe in bundle.probes_of(query):
        judges = [RECALL_JUDGE] if probe.id.startswith(PROBE_PREFIX) else []
        out.append(
            spec.model_copy(
                update={
                    "query_id": probe.id,
                    "models": chosen,
                    "judges": judges,
                    "probe_of": run_id,
                    "label": probe_label(spec.label),
                }
            )
        )
    return out


async def run_probes(
    engine: Engine,
    judges_for: Callable[[RunSpec], Sequence[Judge]],
    prepare: Callable[[RunSpec, UserBundle], Awaitable[PromptPlan]],
    specs: Sequence[RunSpec],
    bundle: UserBundle,
) -> list[str]:
    """Run every probe spec through ``engine`` (its recorder stores them, its per-provider limits
    hold), one after the other, each scored by ``judges_for(spec)``; the probe run ids."""
    run_ids = []
    for spec in specs:
        plan = await prepare(spec, bundle)
        run_ids.append(await engine.run(spec, plan, bundle, judges=judges_for(spec)))
    return run_ids
