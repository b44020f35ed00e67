"""A benchmark's profile as a run's defaults: the context, inter turns, method and judges a run of
one of its users starts from, and which of them came from the profile.

The profile is the user's benchmark's (:func:`core.benchmark.for_source`), one named instead
(``--profile NAME``), or none (``--profile none``; users of no benchmark: sample, native, chat
logs). An option the operator set always wins; a profile field left None keeps prefscope's own
default. The judge: a kind that needs a model (PrefEval's ``taxonomy``) is built as
``<kind>:<model id>`` with the configured judge model (:func:`judge_model`), else the offline
heuristic stands in and the note says why; a kind that needs none (``locomo``, ``choice``) applies
as it is; one that compares two answers (``pairwise``) has its own command and is no run's judge.

Pure: the callers (``prompt`` and ``run`` through ``tui/cli/spec_options``, the TUI's run bar)
pass what the operator set, prefscope's defaults, the user's source and the configured judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import benchmark as benchmarks
from core.benchmark import Benchmark, Profile
from core.history.configs import ContextError, config_named
from core.judges import HEURISTIC, JUDGES
from core.plan import PromptPlan

#: ``--profile none``: prefscope's own defaults whatever the user's benchmark.
NONE = "none"
#: prefscope's own defaults (RealPref's zero-shot over its simple context).
DEFAULT_CONTEXT = "simple"
DEFAULT_METHOD = "zero-shot"


class UnknownProfile(ValueError):
    """``--profile NAME`` names no installed benchmark with a profile."""


@dataclass(frozen=True)
class Choice:
    """Values for what a profile sets: the operator's (None / empty: not set) or the defaults."""

    context: str | None = None
    turns: int | None = None
    method: str | None = None
    judges: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: dict[str, Any]) -> Choice:
        """From ``{"context", "turns", "method", "judge"}`` (any of them; judge "" = no judge)."""
        judges = (values["judge"],) if "judge" in values else ()
        return cls(values.get("context"), values.get("turns"), values.get("method"), judges)


@dataclass(frozen=True)
class Resolved:
    """The effective choices and where they came from."""

    context: str
    turns: int | None
    method: str
    judges: tuple[str, ...]
    #: The benchmark whose profile was used (None: no profile).
    benchmark: str | None = None
    title: str = ""
    #: (``context`` | ``turns`` | ``method`` | ``judge``, value) taken from the profile, in that order.
    applied: tuple[tuple[str, Any], ...] = ()
    #: Why a profile value was not taken as written (``taxonomy needs a judge model …``).
    reasons: tuple[str, ...] = ()

    @property
    def from_profile(self) -> dict[str, Any]:
        return dict(self.applied)

    def values(self) -> dict[str, Any]:
        """``{"context", "turns", "method", "judge"}`` with one judge ("" for none), as a picker shows them."""
        return {
            "context": self.context,
            "turns": self.turns,
            "method": self.method,
            "judge": self.judges[0] if self.judges else "",
        }

    def note(self, hint: str = "") -> str | None:
        """``defaults from the PrefEval profile: context prefeval-turns, turns 5, …``; None when the
        profile gave nothing (no profile, or every one of its fields was set by the operator)."""
        if not self.applied:
            return None
        parts = ", ".join(f"{name} {value}" for name, value in self.applied)
        why = f" ({'; '.join(self.reasons)})" if self.reasons else ""
        return f"defaults from the {self.title} profile: {parts}{why}" + (f"; {hint}" if hint else "")

    def as_json(self) -> dict[str, Any] | None:
        """``{"name", "title", "applied": {field: value}, "reasons"}``; None when nothing was applied."""
        if not self.applied:
            return None
        return {
            "name": self.benchmark,
            "title": self.title,
            "applied": self.from_profile,
            "reasons": list(self.reasons),
        }


def prefscope_defaults(judge_setting: str | None) -> Choice:
    """prefscope's own defaults on the command line: simple, zero-shot, the configured judge."""
    return Choice(DEFAULT_CONTEXT, None, DEFAULT_METHOD, (judge_setting,) if judge_setting else ())


def profile_names() -> list[str]:
    """The names ``--profile`` takes: every installed benchmark with a profile, then ``none``."""
    return [b.name for b in benchmarks.installed() if b.profile is not None] + [NONE]


def choose(requested: str | None, source: str | None) -> Benchmark | None:
    """Whose profile a run starts from: ``requested`` (a benchmark name, or ``none``), else the
    benchmark of the user's ``source``. Raises :class:`UnknownProfile` for a name with no profile."""
    if requested is None:
        found = benchmarks.for_source(source) if source else None
        return found if found is not None and found.profile is not None else None
    name = requested.strip().lower()
    if name == NONE:
        return None
    found = benchmarks.find(name)
    if found is None or found.profile is None:
        raise UnknownProfile(f"unknown profile {requested!r}; expected one of {', '.join(profile_names())}")
    return found


def judge_model(setting: str | None) -> str | None:
    """The judge model ``Settings.judge`` names, or None when it names none.

    ``openai:gpt-4o-mini`` names one; so does ``rubric:openai:gpt-4o-mini`` (a kind, then the
    model); ``demo:heuristic`` and the other judges that call no model (``choice``) name none.
    """
    text = (setting or "").strip()
    whole = JUDGES.find(text) if text else None
    if not text or (whole is not None and not whole.needs_model):
        return None
    kind, _, rest = text.partition(":")
    entry = JUDGES.find(kind)
    if entry is not None:
        rest = rest.strip()
        return rest if entry.needs_model and ":" in rest else None
    return text if ":" in text else None


def takes_turns(context: str) -> bool:
    try:
        return config_named(context).takes_turns
    except ContextError:  # an unknown name is reported where the context is built
        return False


def resolve(given: Choice, benchmark: Benchmark | None, defaults: Choice, judge_setting: str | None) -> Resolved:
    """The effective context, turns, method and judges: ``given`` where set, else the profile of
    ``benchmark`` where it sets one, else ``defaults``."""
    profile: Profile | None = benchmark.profile if benchmark is not None else None
    if benchmark is None or profile is None:
        return Resolved(
            context=given.context or defaults.context or DEFAULT_CONTEXT,
            turns=given.turns if given.turns is not None else defaults.turns,
            method=given.method or defaults.method or DEFAULT_METHOD,
            judges=given.judges or defaults.judges,
        )
    applied: list[tuple[str, Any]] = []
    reasons: list[str] = []

    def pick(name: str, mine: Any, theirs: Any, default: Any) -> Any:
        if mine is not None:
            return mine
        if theirs is not None:
            applied.append((name, theirs))
            return theirs
        return default

    context = pick("context", given.context, profile.context, defaults.context or DEFAULT_CONTEXT)
    turns = pick("turns", given.turns, profile.turns if takes_turns(context) else None, defaults.turns)
    method = pick("method", given.method, profile.method, defaults.method or DEFAULT_METHOD)
    judges = given.judges
    if not judges:
        judge, reason = profile_judge(profile.judge, judge_setting)
        if reason:
            reasons.append(reason)
        judges = (pick("judge", None, judge, None),) if judge is not None else defaults.judges
    return Resolved(context, turns, method, judges, benchmark.name, benchmark.title, tuple(applied), tuple(reasons))


def profile_judge(kind: str | None, judge_setting: str | None) -> tuple[str | None, str | None]:
    """(the judge string a profile's judge kind becomes, or None to keep the default; why it is not
    the kind as written, or None)."""
    if kind is None:
        return None, None
    entry = JUDGES.find(kind)
    if entry is None:
        return None, f"its judge {kind!r} is not installed"
    if not entry.per_response:
        return None, f"its judge {entry.name} compares two answers: see `prefscope pairwise`"
    if not entry.needs_model:
        return entry.name, None
    model = judge_model(judge_setting)
    if model is None:
        return HEURISTIC, f"{entry.name} needs a judge model and none is configured: set `judge` to one"
    return f"{entry.name}:{model}", None


def noted(plan: PromptPlan, resolved: Resolved, hint: str = "") -> PromptPlan:
    """The plan with the profile's note first (stored with a run, printed by ``prompt``); the plan
    itself when no profile gave anything, so it dumps as before."""
    note = resolved.note(hint)
    return plan.model_copy(update={"notes": [note, *plan.notes]}) if note else plan
