"""Two stored runs side by side: what differs in their specs, then each model's status, tokens,
cost and scores in both. Rendered as Markdown in a :class:`~tui.screens.text_view.TextView`."""

from __future__ import annotations

from tui.widgets.response_pane import PaneMetrics, cost_text

SPEC_FIELDS = ("user_id", "query_id", "expression_type", "context", "seed", "method", "force", "judges", "label")


def _spec_value(run, name: str) -> str:
    if name == "models":
        return ", ".join(m.id for m in run.spec.models)
    value = getattr(run.spec, name)
    return ", ".join(value) if isinstance(value, list) else str(value)


def _scores(run, response_id: str) -> str:
    parts = []
    for j in run.judgments:
        if j.response_id != response_id:
            continue
        who = "you:" if j.human else ""
        parts.append(f"{who}{j.dimension} {'?' if j.score is None else f'{j.score:g}'}")
    return ", ".join(parts) or "—"


def compare_markdown(a, b) -> str:
    """``a`` and ``b`` are ``storage.runs.StoredRun``."""
    lines = [f"| | A `{a.id}` | B `{b.id}` |", "|---|---|---|"]
    for name in ("created_at", "status"):
        lines.append(f"| {name} | {getattr(a, name)} | {getattr(b, name)} |")
    for name in (*SPEC_FIELDS, "models"):
        va, vb = _spec_value(a, name), _spec_value(b, name)
        mark = " **≠**" if va != vb else ""
        lines.append(f"| {name}{mark} | {va} | {vb} |")
    lines.append(f"| prompt tokens | {a.plan.total_tokens:,} | {b.plan.total_tokens:,} |")
    lines.append(
        f"| evidence → query | {', '.join(f'{e.tokens_to_query:,}' for e in a.plan.evidence) or '—'} | "
        f"{', '.join(f'{e.tokens_to_query:,}' for e in b.plan.evidence) or '—'} |"
    )
    lines += ["", "### answers", "", "| model | A | B |", "|---|---|---|"]
    finals_a = {r.model: r for r in a.final_responses()}
    finals_b = {r.model: r for r in b.final_responses()}
    for model in dict.fromkeys([*finals_a, *finals_b]):
        cells = []
        for run, finals in ((a, finals_a), (b, finals_b)):
            r = finals.get(model)
            if r is None:
                cells.append("—")
                continue
            m = PaneMetrics.of(r)
            cells.append(
                f"{r.status} · {m.output_tokens or 0} tok · {cost_text(r.cost_usd, r.is_demo)} · {_scores(run, r.id)}"
            )
        lines.append(f"| `{model}` | {cells[0]} | {cells[1]} |")
    for label, _run, finals in (("A", a, finals_a), ("B", b, finals_b)):
        lines += ["", f"### {label}: answers"]
        for model, r in finals.items():
            text = " ".join((r.text or "").split())
            lines.append(f"\n**{model}** ({r.status}): {text[:600]}{'…' if len(text) > 600 else ''}")
    return "\n".join(lines)
