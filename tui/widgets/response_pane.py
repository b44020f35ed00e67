"""One model's answer: a two-line header (status, timings, tokens, cost), the reply, judge scores,
and once judged its diagnosis label (find → know → apply) on the bottom border.

The reply streams into a StreamingMarkdown (see its module for the measurements behind it):
formatted while it streams, at a cost per update that does not grow with the reply's length.
The pane only renders: the screen decides what cancel/retry mean.

The reply view follows new output only while the reader is at its bottom.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from core.text.terminal_safe import terminal_safe
from tui.safe_text import safe_text
from tui.widgets.diagnosis_tab import probe_binding
from tui.widgets.streaming_markdown import StreamingMarkdown

STATUS_STYLE = {
    "waiting": "dim",
    "running": "bold yellow",
    "ok": "bold green",
    "error": "bold red",
    "cancelled": "bold magenta",
    "interrupted": "bold magenta",
}


@dataclass(frozen=True, slots=True)
class PaneMetrics:
    """What the header shows about a finished response (from a live event or a stored row)."""

    ttft_ms: float | None
    duration_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cache_hit: bool = False
    #: Prompt tokens served from the provider's prompt cache.
    cache_read_tokens: int | None = None
    #: "stream", or the provider batch API the answer came from (it has no timings).
    via: str = "stream"

    @classmethod
    def of(cls, r) -> PaneMetrics:
        """From a ``ResponseFinished`` or a ``storage.runs.StoredResponse``."""
        return cls(
            r.ttft_ms,
            r.duration_ms,
            r.input_tokens,
            r.output_tokens,
            r.cost_usd,
            bool(r.cache_hit),
            r.cache_read_tokens,
            r.via,
        )

    @property
    def tokens_per_s(self) -> float | None:
        if not self.output_tokens or self.ttft_ms is None or self.duration_ms is None:
            return None
        gen_s = (self.duration_ms - self.ttft_ms) / 1000
        return self.output_tokens / gen_s if gen_s > 0 else None


def cost_text(cost_usd: float | None, is_demo: bool) -> str:
    """Never "$0" for an unknown price: demo models are free, unknown prices are n/a."""
    if is_demo:
        return "free (demo)"
    if cost_usd is None:
        return "cost n/a"
    if 0 < cost_usd < 0.0001:
        return "<$0.0001"
    return f"${cost_usd:.4f}"


def header_lines(status: str, step: str, metrics: PaneMetrics | None, is_demo: bool) -> Text:
    """Two short lines: status and speed; tokens and cost."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"● {status}", STATUS_STYLE.get(status, ""))
    if step and step != "answer":
        text.append(f" · step {step}", "dim")
    m = metrics
    if m is not None:
        if m.ttft_ms is not None:
            text.append(f" · ttft {m.ttft_ms:.0f}ms")
        if m.tokens_per_s is not None:
            text.append(f" · {m.tokens_per_s:.0f} t/s")
        if m.via != "stream":
            text.append(f" · via {m.via}", "cyan")
    text.append("\n")
    if m is not None:
        if m.output_tokens is not None:
            inp = f"{m.input_tokens:,}" if m.input_tokens is not None else "?"
            text.append(f"{inp}→{m.output_tokens:,} tok · ", "dim")
            if m.cache_read_tokens:
                text.append(f"{m.cache_read_tokens:,} cached · ", "dim")
        text.append(cost_text(m.cost_usd, is_demo), "dim" if not is_demo else "cyan")
        if m.cache_hit:
            text.append(" · replay", "cyan")
    else:
        text.append("streaming … " if status == "running" else "", "dim")
        text.append("free (demo)" if is_demo else "", "cyan")
    return text


class ResponsePane(Vertical, can_focus=True):
    BINDINGS = [probe_binding()]
    DEFAULT_CSS = """
    ResponsePane { border: round $panel; height: 1fr; width: 1fr; }
    ResponsePane:focus-within, ResponsePane:focus { border: round $accent; }
    ResponsePane > .pane-header { height: 2; padding: 0 1; }
    ResponsePane > StreamingMarkdown { height: 1fr; }
    ResponsePane > .pane-scores { height: auto; max-height: 12; padding: 0 1; border-top: dashed $panel; }
    ResponsePane > .pane-scores.empty { display: none; }
    ResponsePane.error > StreamingMarkdown { background: $error 10%; }
    """

    def __init__(self, slot: int, model_id: str, *, is_demo: bool, id: str | None = None):
        super().__init__(id=id)
        self.slot = slot
        self.model_id = model_id
        self.is_demo = is_demo
        self.status = "waiting"
        self.step = ""
        self.full_text = ""
        self.response_id: str | None = None
        self._metrics: PaneMetrics | None = None
        self._judgments: list = []
        self.show_rationales = False
        self.diagnosis = None  # core.analysis.diagnosis.Diagnosis of the final answer, once judged
        self.border_title = safe_text(self.label)  # a str title would be parsed as markup

    @property
    def label(self) -> str:
        return f"{self.model_id} (demo)" if self.is_demo else self.model_id

    @property
    def judgments(self) -> list:
        return list(self._judgments)

    def compose(self) -> ComposeResult:
        yield Static(self._header_text(), classes="pane-header")
        yield StreamingMarkdown()
        yield Static("", classes="pane-scores empty")

    # -- streaming -----------------------------------------------------------------------
    async def begin(self, step: str, is_final: bool, response_id: str | None = None) -> None:
        """A new request starts (a multi-step method shows each step under its own heading)."""
        self.status = "running"
        self.step = step
        self.response_id = response_id
        self.remove_class("error")
        if not is_final or self.full_text:
            heading = f"\n\n#### step: {step}\n\n" if self.full_text else f"#### step: {step}\n\n"
            self.full_text += heading
            self._body.append(heading)
        self._refresh_header()

    async def write(self, text: str) -> None:
        if not text:
            return
        self.full_text += text
        self._body.append(text)

    @property
    def _body(self) -> StreamingMarkdown:
        return self.query_one(StreamingMarkdown)

    async def finish(self, finished) -> None:
        """The request ended (``core.run.spec.ResponseFinished``): every token is already shown; an
        error or cancellation note is added under the partial answer."""
        self._metrics = PaneMetrics.of(finished)
        running_on = not finished.is_final_step and finished.status == "ok"
        note = _status_note(finished.status, finished.error, bool(self.full_text.strip()))
        if note:
            self._body.append(note)
        self.status = "running" if running_on else finished.status
        self.set_class(finished.status == "error", "error")
        self._refresh_header()

    async def show_stored(self, response, judgments: list, text: str | None = None) -> None:
        """Refill from a stored response (``storage.runs.StoredResponse``) and its judgments;
        ``text`` replaces the response's own text (a multi-step answer with its step headings)."""
        self.response_id = response.id
        self.step = response.step
        self.full_text = text if text is not None else (response.text or "")
        self._metrics = PaneMetrics.of(response)
        self._judgments = list(judgments)
        await self._show_final(response.status, response.error)
        self._body.scroll_home(animate=False, immediate=True)  # a re-opened answer reads from the top
        self._refresh_scores()

    async def _show_final(self, status: str, error: str | None) -> None:
        self.status = status
        self.set_class(status == "error", "error")
        self._body.set_text(self.full_text + _status_note(status, error, bool(self.full_text.strip())))
        self._refresh_header()

    async def reset(self) -> None:
        self.status = "waiting"
        self.step = ""
        self.full_text = ""
        self.response_id = None
        self._metrics = None
        self._judgments.clear()
        self.set_diagnosis(None)
        self.remove_class("error")
        self._body.set_text("")
        self._refresh_header()
        self._refresh_scores()

    # -- scores --------------------------------------------------------------------------
    def add_judgment(self, judgment) -> None:
        self._judgments.append(judgment)
        self._refresh_scores()

    def set_judgments(self, judgments: list) -> None:
        self._judgments = list(judgments)
        self._refresh_scores()

    def toggle_rationales(self) -> None:
        self.show_rationales = not self.show_rationales
        self._refresh_scores()

    def _refresh_scores(self) -> None:
        scores = self.query_one(".pane-scores", Static)
        scores.set_class(not self._judgments, "empty")
        scores.update(scores_text(self._judgments, self.show_rationales))

    # -- diagnosis -----------------------------------------------------------------------
    def set_diagnosis(self, diagnosis, *, probing: bool = False) -> None:
        """Show the final answer's diagnosis label (coloured) on the bottom border; None clears it."""
        self.diagnosis = diagnosis
        self.border_subtitle = diagnosis_subtitle(diagnosis, probing)

    # -- header --------------------------------------------------------------------------
    def _refresh_header(self) -> None:
        self.query_one(".pane-header", Static).update(self._header_text())

    def _header_text(self) -> Text:
        return header_lines(self.status, self.step, self._metrics, self.is_demo)


def diagnosis_subtitle(diagnosis, probing: bool = False) -> Text:
    """``not known`` in its colour (``tui.diagnosis_style.COLOURS``); ``probing …`` while the
    probes run (the label may change: a narrow pane's border has room for one of them)."""
    if probing:
        return Text("probing …", "italic cyan")
    if diagnosis is None:
        return Text()
    from tui.diagnosis_style import label_text

    return label_text(diagnosis)


def _status_note(status: str, error: str | None, partial: bool) -> str:
    if status not in ("error", "cancelled", "interrupted", "incomplete") or not error:
        return ""
    note = f"\n\n> **{status}:** {error}"
    if partial:
        note += "\n>\n> The partial answer above is kept and stored."
    return note


def scores_text(judgments: list, with_rationales: bool) -> Text:
    """Compact scores (``awareness 4/5 alignment 5/5 …``); with rationales, one per line."""
    text = Text()
    if not judgments:
        return text
    for j in judgments:
        label = j.dimension if j.dimension != "*" else j.kind
        if j.human:
            label = f"you:{label}"
        text.append(f"{terminal_safe(label)} ", "bold")
        if j.parse_ok and j.score is not None:
            scale = f"/{j.scale_max:g}" if j.scale_max is not None else ""
            text.append(f"{j.score:.3g}{scale}", "green" if _good(j) else "yellow")  # 0.0521, not 0.0520771
        elif j.parse_ok:  # parsed, nothing to score (e.g. no target preference)
            text.append("n/a", "dim")
        else:
            text.append("unparsed", "red")
        if with_rationales:
            reason = (j.rationale or j.error or j.raw or "").strip()
            text.append(f"\n  {terminal_safe(reason[:400])}\n", "italic")
        else:
            text.append("  ")
    kinds = {("heuristic" if j.heuristic else "human" if j.human else j.judge_model) for j in judgments}
    text.append("\n" if not with_rationales else "", "")
    text.append(terminal_safe(f"by {', '.join(sorted(kinds))}"), "dim")
    if not with_rationales:
        text.append(" · r: reasons", "dim")
    return text


def _good(j) -> bool:
    if j.score is None or j.scale_max is None or j.scale_min is None:
        return True
    return j.score >= (j.scale_min + j.scale_max) / 2
