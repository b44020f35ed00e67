"""The Prompt tab: the exact messages of every step, their token counts, where evidence sits.

Rendered as one rich Text in a RenderedView (drawn line by line): a long history has a hundred
messages or more; a Markdown widget per message, or one Static re-wrapped on every screen layout,
made layouts (and so streaming and switching users) several times slower.
"""

from __future__ import annotations

from rich.text import Text

from core.text.terminal_safe import terminal_safe as safe
from tui.widgets.rendered_view import RenderedView

HISTORY_PREVIEW = 600  # characters of a long message shown at each end

EMPTY = "Run something (ctrl+r) or re-open a run (Runs tab) to see the exact prompt here."
ROLE_STYLE = {"system": "bold magenta", "user": "bold cyan", "assistant": "bold green"}


def plan_text(spec, plan, token_counts: list[list[int]] | None = None) -> Text:
    """The plan as text. ``token_counts[step][message]`` are per-message tokens when known."""
    expr = f"E{spec.expression_type}" if spec.expression_type else "all types"
    t = Text()
    t.append("method ", "dim").append(plan.method, "bold")
    t.append(" · context ", "dim").append(f"{spec.context} (seed {spec.seed}, {expr})", "bold")
    if plan.filler_pools:  # the pools the filler came from (recorded by prepare)
        t.append(" · filler ", "dim").append(safe(", ".join(plan.filler_pools)), "bold")
    t.append(" · history ", "dim").append(f"{plan.history_tokens:,} tokens in {len(plan.context)} sessions", "bold")
    t.append(" · prompt ", "dim").append(f"{plan.total_tokens:,} tokens in {len(plan.steps)} step(s)\n", "bold")
    if plan.evidence:
        t.append("\nWhere the gold evidence sits (★ on the timeline)\n", "bold yellow")
        for e in plan.evidence:
            t.append(f"  ★ {safe(e.session_id)}", "yellow")
            t.append(
                f"  session #{e.position + 1} of {len(plan.context)} · {e.tokens_to_query:,} tokens before "
                "the question\n"
            )
    if plan.retrieved:
        t.append("\nRetrieved turns (▸ on the timeline)\n", "bold magenta")
        for r in plan.retrieved:
            t.append(f"  ▸ #{r.rank} {safe(r.session_id)}#{r.turn_index}", "magenta")
            t.append(f"  similarity {r.similarity:.3f}{'  ★ gold' if r.is_evidence else ''}\n")
    for note in plan.notes:
        t.append(f"\n⚠ {safe(note)}\n", "yellow")
    for i, step in enumerate(plan.steps):
        purpose = f" — {step.purpose}" if step.purpose else ""
        t.append(f"\n── step {step.name}: {step.tokens:,} tokens{purpose} ──\n", "bold blue")
        for k, m in enumerate(step.messages):
            count = ""
            if token_counts and i < len(token_counts) and k < len(token_counts[i]):
                count = f"  {token_counts[i][k]:,} tokens"
            t.append(f"\n{m.role}", ROLE_STYLE.get(m.role, "bold")).append(f"{count}\n", "dim")
            body = safe(m.content)  # data: escape sequences shown, never sent to the terminal
            if len(body) > 2 * HISTORY_PREVIEW:
                cut = len(body) - 2 * HISTORY_PREVIEW
                t.append(body[:HISTORY_PREVIEW])
                t.append(f"\n  … [{cut:,} characters not shown] …\n", "dim italic")
                t.append(body[-HISTORY_PREVIEW:])
            else:
                t.append(body)
            t.append("\n")
    return t


class PromptView(RenderedView):
    """The exact prompt, drawn line by line (a whole long-context prompt stays cheap)."""

    def __init__(self, *, id: str | None = None):
        super().__init__(EMPTY, id=id)

    def show(self, text: Text | str) -> None:
        self.update(text)

    @property
    def text(self) -> str:
        return self.renderable.plain if isinstance(self.renderable, Text) else str(self.renderable)
