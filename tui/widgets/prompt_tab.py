"""The Prompt tab: the exact messages of every step, their token counts, where evidence sits."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

HISTORY_PREVIEW = 600  # characters of a long message shown at each end

EMPTY = "Run something (ctrl+r) or re-open a run (Runs tab) to see the exact prompt here."


def plan_markdown(spec, plan, token_counts: list[list[int]] | None = None) -> str:
    """Markdown for a PromptPlan. ``token_counts[step][message]`` are per-message tokens when known."""
    expr = f"E{spec.expression_type}" if spec.expression_type else "all types"
    lines = [
        f"method: `{plan.method}` · context: `{spec.context}` (seed {spec.seed}, {expr}) · "
        f"history: {plan.history_tokens:,} tokens in {len(plan.context)} sessions · "
        f"prompt: {plan.total_tokens:,} tokens in {len(plan.steps)} step(s)"
    ]
    if plan.evidence:
        lines.append("\n**Where the gold evidence sits** (★ on the timeline)\n")
        lines.append("| session | position in history | tokens between it and the question |")
        lines.append("|---|---|---|")
        for e in plan.evidence:
            lines.append(f"| `{e.session_id}` | #{e.position + 1} of {len(plan.context)} | {e.tokens_to_query:,} |")
    if plan.retrieved:
        lines.append("\n**Retrieved turns** (▸ on the timeline)\n")
        lines.append("| rank | turn | similarity | gold? |")
        lines.append("|---|---|---|---|")
        for r in plan.retrieved:
            lines.append(f"| {r.rank} | `{r.session_id}#{r.turn_index}` | {r.similarity:.3f} | {'★' if r.is_evidence else ''} |")
    for note in plan.notes:
        lines.append(f"\n> {note}")
    for i, step in enumerate(plan.steps):
        purpose = f" — {step.purpose}" if step.purpose else ""
        lines.append(f"\n### step `{step.name}` — {step.tokens:,} tokens{purpose}")
        for k, m in enumerate(step.messages):
            body = m.content
            if len(body) > 2 * HISTORY_PREVIEW:
                cut = len(body) - 2 * HISTORY_PREVIEW
                body = f"{body[:HISTORY_PREVIEW]}\n\n… [{cut:,} characters not shown] …\n\n{body[-HISTORY_PREVIEW:]}"
            count = ""
            if token_counts and i < len(token_counts) and k < len(token_counts[i]):
                count = f" ({token_counts[i][k]:,} tokens)"
            fence = "~~~~" if "```" in body else "```"
            lines.append(f"\n**{m.role}:**{count}\n\n{fence}text\n{body}\n{fence}")
    return "\n".join(lines)


class PromptView(VerticalScroll):
    DEFAULT_CSS = "PromptView Markdown { margin: 0 1; }"

    def compose(self) -> ComposeResult:
        yield Markdown(EMPTY, id="prompt-md")

    def show(self, text: str) -> None:
        self.query_one(Markdown).update(text)
        self.scroll_home(animate=False)
