"""A paired comparison (:class:`storage.compare.PairedResult`) as text: the statistics table and the
key factors that vary between items. Shared by ``prefscope compare`` and the TUI's paired screen."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from tui.safe_text import safe_text

SHORT = {"expression_type": "E", "evidence_depth": "depth"}
REGRESSED, IMPROVED = "red", "green"


def num(v, fmt: str = ".3f") -> str:
    return "–" if v is None else format(v, fmt)


def p_text(v) -> str:
    """``p = 0.042``, ``p < 0.001``, or ``p –`` when there was nothing to test."""
    return "p –" if v is None else ("p < 0.001" if v < 0.001 else f"p = {v:.3f}")


def value_text(v) -> str:
    if v is None:
        return ""
    return f"{v:g}" if isinstance(v, float) else str(v)


def statistics(result) -> Table:
    """The comparison in a few lines: sides, judge, pairs, means, the difference with its CI, the
    test and the effect sizes."""
    c = result.comparison
    t = Table(show_header=False, box=None, pad_edge=False, padding=(0, 1))
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    t.add_row("A", safe_text(result.a.label))
    t.add_row("B", safe_text(result.b.label))
    t.add_row("judge", safe_text(result.judge))
    unpaired = f"  (unpaired: {c.unpaired_a} in A, {c.unpaired_b} in B)" if c.unpaired_a or c.unpaired_b else ""
    t.add_row("pairs", f"{c.n}{unpaired} · mean A {num(c.mean_a)} → B {num(c.mean_b)}")
    if result.failed_a or result.failed_b:
        t.add_row("no score", f"A {result.failed_a}, B {result.failed_b} (judge parse failures: not paired)")
    diff = Text()
    colour = (IMPROVED if c.mean_diff > 0 else REGRESSED) if c.mean_diff else ""
    diff.append(num(c.mean_diff, "+.3f"), f"bold {colour}".strip())
    diff.append(f"  95% paired bootstrap CI [{num(c.ci_low, '+.3f')}, {num(c.ci_high, '+.3f')}]")
    t.add_row("B − A", diff)
    if c.binary:
        t.add_row("test", f"{c.test}: {p_text(c.p_value)} (right in A only {c.a_only}, in B only {c.b_only})")
        t.add_row("effect", f"Cohen's d_z {num(c.effect_dz)}")
    else:
        t.add_row("test", f"{c.test}: W = {num(c.statistic, 'g')}, {p_text(c.p_value)}")
        t.add_row("effect", f"Cohen's d_z {num(c.effect_dz)} · rank-biserial r {num(c.rank_biserial)}")
    changed = Text()
    changed.append(f"{len(c.regressed)} regressed", REGRESSED if c.regressed else "dim")
    changed.append(" · ")
    changed.append(f"{len(c.improved)} improved", IMPROVED if c.improved else "dim")
    changed.append(f" · {len(c.ties)} ties (not listed)")
    t.add_row("items", changed)
    return t


def varying(result) -> list[int]:
    """Indexes of the key factors whose value differs between pairs (the others go above the list)."""
    c = result.comparison
    pairs = [*c.regressed, *c.improved, *c.ties]
    return [i for i in range(len(result.key_factors)) if len({p.key[i] for p in pairs}) > 1]
