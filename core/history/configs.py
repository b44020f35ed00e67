"""The named context configurations (RealPref Table 2, CUPID §4, baselines) and the window check."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ContextConfig:
    name: str
    label: str
    interval: int = 0
    tail: int = 0
    description: str = ""
    source: str = ""
    #: How the TUI's context picker names it: the filler it adds (``+35K``), never a total, which
    #: depends on the user (the workbench's estimate line shows the prompt's real size); "": not
    #: offered there.
    picker_label: str = ""
    #: It takes ``--turns`` (inter turns after the preference); the other configurations refuse it.
    takes_turns: bool = False

    @property
    def filler_target(self) -> int:
        return self.interval + self.tail


CONFIGS: dict[str, ContextConfig] = {
    c.name: c
    for c in [
        ContextConfig("simple", "Simple", 0, 0, "user-specific sessions only (~2K)", "RealPref Table 2", "Simple"),
        ContextConfig(
            "normal",
            "Normal",
            35_000,
            0,
            "35K filler scattered between user sessions",
            "RealPref Table 2",
            "Normal +35K",
        ),
        ContextConfig(
            "long", "Long", 70_000, 0, "70K filler scattered between user sessions", "RealPref Table 2", "Long +70K"
        ),
        ContextConfig(
            "very_long",
            "Very Long",
            140_000,
            0,
            "140K filler scattered between user sessions",
            "RealPref Table 2",
            "Very Long +140K",
        ),
        ContextConfig(
            "extended",
            "Extended",
            35_000,
            105_000,
            "35K interval + 105K tail filler",
            "RealPref Table 2",
            "Extended 35+105K",
        ),
        ContextConfig(
            "extreme",
            "Extreme",
            35_000,
            210_000,
            "35K interval + 210K tail filler",
            "RealPref Table 2",
            "Extreme 35+210K",
        ),
        ContextConfig("full", "Full", 0, 0, "every prior session of the user, all kinds", "CUPID §4", "Full history"),
        ContextConfig(
            "oracle",
            "Oracle",
            0,
            0,
            "only sessions sharing the query's context factor and preference",
            "CUPID §4",
            "CUPID oracle",
        ),
        ContextConfig(
            "summaries",
            "Summaries",
            0,
            0,
            "every prior session replaced by a model-written summary",
            "CUPID §4.2.3, Fig. 23",
            "Summaries",
        ),
        ContextConfig(
            "none", "No history", 0, 0, "no history: the generic baseline", "Re-Centering §6, InterPref", "No history"
        ),
        ContextConfig(
            "custom", "Custom", 0, 0, "operator-picked sessions, in the order given", "prefscope", "Custom sessions"
        ),
        ContextConfig(
            "prefeval-turns",
            "PrefEval turns",
            0,
            0,
            "the preference session, then N inter turns (2N messages) from PrefEval's pool",
            "PrefEval benchmark_generation.py --inter_turns",
            "PrefEval turns",
            takes_turns=True,
        ),
    ]
}
_ALIASES = {
    "very-long": "very_long",
    "verylong": "very_long",
    "very long": "very_long",
    "no_history": "none",
    "no-history": "none",
    "prefeval_turns": "prefeval-turns",
    "turns": "prefeval-turns",
}


def config_named(name: str) -> ContextConfig:
    key = _ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in CONFIGS:
        raise ContextError(f"unknown context configuration {name!r}; expected one of {', '.join(CONFIGS)}")
    return CONFIGS[key]


class ContextError(ValueError):
    """A context cannot be built as asked (unknown config, missing sessions, missing query …)."""


class ContextWindowExceeded(ContextError):
    """The history is larger than the model's context window (raised unless forced)."""

    def __init__(self, tokens: int, window: int, source: str | None = None):
        self.tokens = tokens
        self.window = window
        #: Where the window came from when a server reported it ("local:m at http://…/v1, max_model_len in /v1/models").
        self.source = source
        over = f"{tokens - window:,} over" + (f"; {source}" if source else "")
        super().__init__(
            f"the prompt is {tokens:,} tokens but the model's window is {window:,} tokens "
            f"({over}); choose a shorter context, or force it: --force on the command line, the force box in the TUI"
        )


def check_window(tokens: int, window: int | None, force: bool = False, source: str | None = None) -> str | None:
    """Refuse a prompt larger than ``window`` (raise :class:`ContextWindowExceeded`, naming ``source``) unless forced.

    Returns a note to show the operator when forced past the window, else ``None``.
    """
    if window is None or tokens <= window:
        return None
    if not force:
        raise ContextWindowExceeded(tokens, window, source)
    return f"forced: {tokens:,} tokens sent to a model with a {window:,}-token window ({tokens - window:,} over)"
