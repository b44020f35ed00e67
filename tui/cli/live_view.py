"""The `prefscope run` terminal view: models side by side in a rich Live layout.

It only renders engine events it is handed; timing comes from the events (taken in the engine).
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from core.plan import PromptPlan
from core.run.spec import JudgeScored, ResponseFinished, ResponseStarted, RunEvent, RunSpec, RunStarted, TokensArrived
from tui.safe_text import safe_text

TAIL_LINES = 14


class _Column:
    def __init__(self, model_id: str, is_demo: bool):
        self.label = f"{model_id} (demo)" if is_demo else model_id
        self.status = "waiting"
        self.step = ""
        self.parts: list[str] = []
        self.finished: ResponseFinished | None = None
        self.scores: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def header(self) -> Text:
        style = {"ok": "green", "error": "red", "cancelled": "magenta", "running": "yellow"}.get(self.status, "dim")
        out = Text(f"● {self.status}", style=style)
        f = self.finished
        if f is not None:
            if f.ttft_ms is not None:
                out.append(f"  ttft {f.ttft_ms:.0f}ms")
            if f.tokens_per_s:
                out.append(f"  {f.tokens_per_s:.0f} t/s")
            if f.output_tokens is not None:
                out.append(f"  {f.output_tokens} tok")
            out.append("  cost " + ("n/a" if f.cost_usd is None else f"${f.cost_usd:.4f}"))
        return out


class LiveView:
    def __init__(self, spec: RunSpec, plan: PromptPlan, *, plain: bool = False, console: Console | None = None):
        self.spec = spec
        self.plan = plan
        self.plain = plain
        self.console = console or Console()
        self.columns = [_Column(m.id, m.is_demo) for m in spec.models]
        self._by_response: dict[str, _Column] = {}
        self.run_id: str | None = None
        self._live: Live | None = None

    def __enter__(self) -> LiveView:
        # Data (ids, notes, answers) is shown as Text, never formatted into markup.
        line = safe_text(self.spec.user_id, style="bold")
        line.append(
            safe_text(
                f" · {self.spec.query_id} · E{self.spec.expression_type} · "
                f"{self.spec.context} · {self.plan.method} · prompt {self.plan.total_tokens:,} tokens"
            )
        )
        self.console.print(line)
        for note in self.plan.notes:
            self.console.print(safe_text(f"note: {note}", style="dim"))
        if not self.plain:
            self._live = Live(self._render(), console=self.console, refresh_per_second=8, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.__exit__(*exc)

    def handle(self, event: RunEvent) -> None:
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
        elif isinstance(event, ResponseStarted):
            col = self.columns[event.slot]
            col.status, col.step = "running", event.step
            if col.parts:
                col.parts.append(f"\n\n[step {event.step}]\n")
            self._by_response[event.response_id] = col
        elif isinstance(event, TokensArrived):
            self._by_response[event.response_id].parts.append(event.text)
        elif isinstance(event, ResponseFinished):
            col = self.columns[event.slot]
            col.finished = event
            col.status = event.status if (event.is_final_step or event.status != "ok") else "running"
            if event.error:
                col.parts.append(f"\n[{event.status}: {event.error}]")
            if self.plain and col.status != "running":
                self.console.print(Panel(safe_text(col.text), title=safe_text(col.label), subtitle=col.header()))
        elif isinstance(event, JudgeScored):
            j = event.judgment
            col = next((c for rid, c in self._by_response.items() if rid == event.response_id), None)
            if col is not None:
                score = f"{j.score:g}" if j.parse_ok and j.score is not None else "n/a" if j.parse_ok else "unparsed"
                col.scores.append(f"{j.dimension} {score}" + ("ʰ" if j.heuristic else ""))
                if self.plain:
                    self.console.print(
                        safe_text(f"  {col.label} · {j.kind} {j.dimension}: {score} — {j.rationale[:160]}")
                    )
        if self._live is not None:
            self._live.update(self._render())

    def _render(self) -> Table:
        table = Table.grid(expand=True, padding=(0, 1))
        for _ in self.columns:
            table.add_column(ratio=1)
        panels = []
        for col in self.columns:
            lines = col.text.splitlines()[-TAIL_LINES:]
            body = Group(col.header(), safe_text("\n".join(lines)), safe_text("  ".join(col.scores), style="cyan"))
            panels.append(Panel(body, title=safe_text(col.label), height=TAIL_LINES + 6))
        table.add_row(*panels)
        return table

    def summary(self, console: Console) -> None:
        table = Table("model", "status", "ttft ms", "tok/s", "in→out tok", "cost", "scores")
        for col in self.columns:
            f = col.finished
            table.add_row(
                safe_text(col.label),
                col.status,
                "" if not f or f.ttft_ms is None else f"{f.ttft_ms:.0f}",
                "" if not f or not f.tokens_per_s else f"{f.tokens_per_s:.0f}",
                "" if not f or f.output_tokens is None else f"{f.input_tokens or 0}→{f.output_tokens}",
                "n/a" if not f or f.cost_usd is None else f"${f.cost_usd:.4f}",
                safe_text(", ".join(col.scores)),
            )
        console.print(table)
        if any("ʰ" in sc for col in self.columns for sc in col.scores):
            console.print("[dim]ʰ = heuristic judge (demo:heuristic), not an LLM judge[/]")
