"""Rich rendering for `prefscope batch`: the estimate, a live progress bar, the final line and the
per-model summary table."""

from __future__ import annotations

from rich.console import Console, Group
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from core.providers.pricing import as_of
from core.run.batch import Progress as BatchProgress
from core.run.cost_scenarios import BATCH, BATCH_CACHING, CACHING, LIST, SCENARIOS
from core.run.estimate import ASSUMED_OUTPUT_TOKENS, Estimate
from tui.safe_text import safe_markup, safe_text


def estimate_table(name: str, cells: int, todo: int, skipped: int, est: Estimate) -> Table:
    t = Table(title=safe_text(f"batch {name}"), show_header=False, box=None)
    t.add_row("cells", f"{cells:,} ({todo:,} to run, {skipped:,} already done/failed and skipped)")
    t.add_row("model calls", f"{est.calls:,} (judge calls not included)")
    t.add_row("prompt tokens", f"{est.input_tokens:,}")
    t.add_row("output tokens", f"≤ {est.output_tokens:,} (max_tokens, or {ASSUMED_OUTPUT_TOKENS} per call assumed)")
    for label, text in scenario_rows(est):
        t.add_row(label, safe_text(text))  # model ids are the operator's text
    for f in est.failures[:5]:
        t.add_row("[red]cannot prepare[/red]", safe_text(f))
    if len(est.failures) > 5:
        t.add_row("", f"… and {len(est.failures) - 5} more")
    return t


def scenario_rows(est: Estimate) -> list[tuple[str, str]]:
    """The estimated cost four ways (``core.run.cost_scenarios``), n/a where there is no price."""
    read, write = est.cache_read_tokens, est.cache_write_tokens
    caching = f"{read:,} prompt tokens read from the cache" + (f", {write:,} written to it" if write else "")
    saving = est.caching_saving_usd
    if saving is not None and saving > 0:
        caching += f"; saves ${saving:,.4f}"
    notes = {
        LIST.name: f"prices of {as_of()}",
        CACHING.name: caching,
        BATCH.name: "through the providers' batch APIs",
        BATCH_CACHING.name: "the providers cache batch requests on a best-effort basis",
    }
    rows = []
    for s in SCENARIOS:
        text = est.scenario_cost_text(s)
        rows.append((s.label, f"{text} ({notes[s.name]})"))
    return rows


def _stats(p: BatchProgress) -> str:
    return (
        f"ok {p.ok} · failed {p.failed} · cancelled {p.cancelled} · running {p.running} · "
        f"tokens {p.input_tokens:,} in / {p.output_tokens:,} out · cost {p.cost_text()}"
    )


class ProgressView:
    def __init__(self, console: Console):
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[stats]}"),
            console=console,
            transient=False,
        )
        self._task: TaskID | None = None

    def update(self, p: BatchProgress) -> None:
        if self._task is None:
            self._task = self.bar.add_task("batch", total=max(p.to_run, 1), stats="")
        self.bar.update(self._task, completed=p.done + p.cancelled, total=max(p.to_run, 1), stats=_stats(p))

    def __enter__(self):
        self.bar.start()
        return self

    def __exit__(self, *exc):
        self.bar.stop()


def progress_view(console: Console) -> ProgressView:
    return ProgressView(console)


def summary_line(name: str, p: BatchProgress) -> str:
    head = "[yellow]stopped[/yellow]" if p.stopped else "[green]done[/green]"
    tail = f"; resume with the same command (batch {safe_markup(name)})" if p.stopped or p.failed else ""
    if p.failed and not p.stopped:
        tail += " and --retry-failed"
    return (
        f"{head}: {p.ok} ok, {p.failed} failed, {p.cancelled} cancelled, {p.skipped} skipped · tokens "
        f"{p.input_tokens:,} in / {p.output_tokens:,} out · cost {p.cost_text()}{tail}"
    )


def summary_table(workbench, name: str, fit: int | None = None) -> Group:
    """Per model, from the stored rows of every run of the batch (earlier sessions included):
    answers, ok / failed, the mean of the default metrics, tokens, cost — `prefscope report
    --batch NAME --summary` prints the same table."""
    from tui.cli.report_view import rich_table

    t = workbench.batch_summary(name)
    return Group(rich_table(t, fit), *(safe_text(f"note: {n}", style="dim") for n in t.notes))
