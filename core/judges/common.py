"""What every LLM judge shares: the judge model spec, one call, and turning a parse into a Judgment.

A judge model is a :class:`core.providers.base.ModelSpec` called only through the ``complete``
callable the engine (or the CLI) hands in, so judges never import an SDK. Judges run at
temperature 0 unless the spec says otherwise. A failed call and a failed parse both become a
Judgment with ``parse_ok=False``, ``score=None``, the raw text kept and the reason in ``error``.
"""

from __future__ import annotations

from core.judges.base import JudgeInput, Judgment
from core.judges.parsing import Parsed
from core.model import Query, UserBundle
from core.plan import Message
from core.providers.base import ModelParams, ModelSpec
from core.providers.calls import Completion

DEFAULT_TEMPERATURE = 0.0


def judge_spec(
    model_id: str, temperature: float | None = DEFAULT_TEMPERATURE, max_tokens: int | None = None
) -> ModelSpec:
    return ModelSpec(id=model_id, params=ModelParams(temperature=temperature, max_tokens=max_tokens))


def messages(system: str | None, user: str) -> list[Message]:
    out = [Message(role="system", content=system)] if system else []
    out.append(Message(role="user", content=user))
    return out


def to_judgment(
    *,
    kind: str,
    dimension: str,
    spec: ModelSpec,
    version: str,
    completion: Completion | None,
    parsed: Parsed | None,
    scale: tuple[float, float] | None,
    score: float | None = None,
    extra: dict | None = None,
    error: str | None = None,
) -> Judgment:
    """One Judgment from a judge call. ``score`` overrides the parsed value (labels mapped to numbers)."""
    raw = completion.text if completion is not None else ""
    lo, hi = scale if scale else (None, None)
    if completion is not None and not completion.ok:
        return Judgment(
            kind=kind,
            dimension=dimension,
            score=None,
            rationale="",
            raw=raw,
            parse_ok=False,
            judge_model=spec.id,
            prompt_version=version,
            temperature=spec.params.temperature,
            scale_min=lo,
            scale_max=hi,
            error=f"judge call failed: {completion.error}",
            extra=dict(extra or {}),
        )
    if error is not None or parsed is None or not parsed.ok:
        reason = error or (parsed.error if parsed is not None else "nothing to parse")
        return Judgment(
            kind=kind,
            dimension=dimension,
            score=None,
            rationale=parsed.rationale if parsed is not None else "",
            raw=raw,
            parse_ok=False,
            judge_model=spec.id,
            prompt_version=version,
            temperature=spec.params.temperature,
            scale_min=lo,
            scale_max=hi,
            error=reason,
            extra=dict(extra or {}),
        )
    value = score if score is not None else (float(parsed.value) if isinstance(parsed.value, (int, float)) else None)
    ex = dict(extra or {})
    if isinstance(parsed.value, str):
        ex.setdefault("label", parsed.value)
    return Judgment(
        kind=kind,
        dimension=dimension,
        score=value,
        rationale=parsed.rationale,
        raw=raw,
        parse_ok=True,
        judge_model=spec.id,
        prompt_version=version,
        temperature=spec.params.temperature,
        scale_min=lo,
        scale_max=hi,
        extra=ex,
    )


def missing_input(
    *,
    kind: str,
    dimension: str,
    judge_model: str,
    version: str,
    reason: str,
    scale: tuple[float, float] | None = None,
    heuristic: bool = False,
    extra: dict | None = None,
) -> Judgment:
    """The judge could not run on this item (no gold preference, no checklist …): a recorded failure."""
    lo, hi = scale if scale else (None, None)
    return Judgment(
        kind=kind,
        dimension=dimension,
        score=None,
        rationale="",
        raw="",
        parse_ok=False,
        judge_model=judge_model,
        prompt_version=version,
        scale_min=lo,
        scale_max=hi,
        heuristic=heuristic,
        error=reason,
        extra=extra or {},
    )


def gold_preference(bundle: UserBundle, query: Query) -> str | None:
    """The preference an answer must follow: the query's target preference, else CUPID's gold one."""
    if query.preference_id:
        try:
            return bundle.preference(query.preference_id).text
        except KeyError:
            pass
    return query.gold_preference


def item_preference(item: JudgeInput) -> str | None:
    return gold_preference(item.bundle, item.query)


def numbered(items: list[str]) -> str:
    """A checklist as ``1. item`` lines."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, 1))
