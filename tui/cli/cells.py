"""Table cells several commands share (`judge`, `attributes`, `relevance`; `agreement`, `audit-judge`)."""

from __future__ import annotations


def short_cell(text: str | None, n: int = 90) -> str:
    """``text`` on one line, cut to ``n`` characters with an ellipsis."""
    s = " ".join((text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def score_cell(value: float | None) -> str:
    """A score as a whole number when it is one, else to three decimals; — when there is none."""
    return "—" if value is None else (f"{value:g}" if float(value).is_integer() else f"{value:.3f}")


def number(value: float | None, digits: int = 3) -> str:
    """A statistic to ``digits`` decimals; – where it is undefined."""
    return "–" if value is None else f"{value:.{digits}f}"
