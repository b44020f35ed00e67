"""Can this judge be trusted? Bias audits of a judge over plain data (``prefscope audit-judge``).

Three audits, each a pure function returning a frozen dataclass; None where a statistic is
undefined (nothing decided, a constant column …), never a made-up number.

- :func:`position_audit` – **position consistency** of a pairwise judge: every pair judged in both
  orders (:meth:`core.judges.preference_pair.PreferencePairJudge.judge_both_orders`). The share of
  pairs whose two verdicts name different winners (flips), and the share of verdicts that picked
  whichever answer was shown first (0.5 is fair). With human labels: how often the judge is
  both consistent and agrees with the human.
- :func:`length_audit` – **length bias** of a pointwise judge: ordinary least squares of score on
  answer length, and a length-controlled score per answering model (see below).
- :func:`self_preference_audit` – **self-preference**: does the judge score answers of its own
  model family (:func:`family_of`) higher than the others'? With human scores: by more than the
  humans do?

**Length-controlled score, adapted from AlpacaEval-LC.** AlpacaEval 2.0's length-controlled win
rate (Dubois et al., 2024, "Length-Controlled AlpacaEval") fits a logistic GLM on the judge's
pairwise preference of a model over the baseline, with a model term, a (normalised)
length-difference term and an instruction term, and reports the win rate predicted with the
length-difference term set to zero: "what would the judge say if both answers had the same
length?". Here a judge gives pointwise scores, so the GLM is linear: one joint OLS fit of
``score ~ model (one-hot, no intercept) + β · (length − mean length)`` over every answer; a model's
length-controlled score is its predicted score at the overall mean length (the length term at
zero), i.e. its one-hot coefficient. β is the *within-model* length effect, so a model that
scores higher only because its answers are longer gets no credit for it. Simplifications against
AlpacaEval-LC: no instruction term, no tanh squashing of length, no regularisation.

A human-labelled set, when present, is each audit's reference: position agreement with the
human's choice, judge − human score gaps for self-preference. Judge and human scores must be on
the same scale (the caller's job).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from core.metrics import wilson_ci
from core.text.words import words

CI = tuple[float | None, float | None]
NO_CI: CI = (None, None)
#: Seed of the self-preference bootstrap: the same scores always give the same interval.
SEED = 0
PER_WORDS = 100  # slopes are per 100 words of answer

# -- position ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionAudit:
    n_pairs: int
    #: Pairs with a verdict in both orders (only these are audited).
    decided: int
    undecided: int
    #: Decided pairs whose two verdicts name different winners (1 then 0, 1 then 0.5 …).
    flips: int
    flip_rate: float | None
    flip_ci: CI
    #: Flips where each order's verdict picked the answer shown first / shown second; the rest of
    #: the flips involve a tie on one side.
    flips_to_first: int
    flips_to_second: int
    #: Share of the decided pairs' non-tie verdicts (two per pair) that picked the answer shown
    #: first: 0.5 is fair, and exactly 0.5 for a judge that never flips.
    first_shown_wins: float | None
    #: Wilson 95% interval; approximate, as a pair's two verdicts are not independent.
    first_shown_ci: CI
    #: Tie verdicts among the decided pairs (out of 2 × decided).
    ties: int
    #: Decided pairs that also have a human label.
    human_n: int = 0
    #: Share of those where the judge did not flip AND its winner is the human's.
    consistent_and_agrees_with_human: float | None = None
    human_ci: CI = NO_CI


def winner(outcome: float) -> int:
    """Answer 1's outcome -> the winner: 1 (answer 1), 2 (answer 2) or 0 (tie)."""
    return 1 if outcome > 0.5 else 2 if outcome < 0.5 else 0


def position_audit(
    pairs: Iterable[tuple[float | None, float | None]], human: Iterable[float | None] | None = None
) -> PositionAudit:
    """``pairs``: (answer 1's outcome with answer 1 shown first, answer 1's outcome with answer 2
    shown first), outcomes 1 / 0.5 / 0, None when that order's verdict is missing. ``human``:
    the human's outcome for answer 1 per pair (same order, None where unlabelled)."""
    pairs = list(pairs)
    labels = list(human) if human is not None else [None] * len(pairs)
    if len(labels) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(labels)} human labels")
    decided = [(winner(a), winner(b), h) for (a, b), h in zip(pairs, labels) if a is not None and b is not None]
    flips = [(w1, w2) for w1, w2, _ in decided if w1 != w2]
    # Order 1 shows answer 1 first, order 2 shows answer 2 first.
    verdicts = [(w1, 1) for w1, _, _ in decided] + [(w2, 2) for _, w2, _ in decided]
    non_tie = [(w, first) for w, first in verdicts if w != 0]
    first_wins = sum(1 for w, first in non_tie if w == first)
    with_human = [(w1, w2, winner(h)) for w1, w2, h in decided if h is not None]
    agree = sum(1 for w1, w2, h in with_human if w1 == w2 == h)
    return PositionAudit(
        n_pairs=len(pairs),
        decided=len(decided),
        undecided=len(pairs) - len(decided),
        flips=len(flips),
        flip_rate=_share(len(flips), len(decided)),
        flip_ci=wilson_ci(len(flips), len(decided)),
        flips_to_first=sum(1 for w1, w2 in flips if (w1, w2) == (1, 2)),
        flips_to_second=sum(1 for w1, w2 in flips if (w1, w2) == (2, 1)),
        first_shown_wins=_share(first_wins, len(non_tie)),
        first_shown_ci=wilson_ci(first_wins, len(non_tie)),
        ties=sum(1 for w, _ in verdicts if w == 0),
        human_n=len(with_human),
        consistent_and_agrees_with_human=_share(agree, len(with_human)),
        human_ci=wilson_ci(agree, len(with_human)),
    )


# -- length --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelLength:
    model: str
    n: int
    mean_score: float
    mean_length: float
    #: Predicted score at the overall mean length (None when the fit is not identifiable).
    lc_score: float | None


@dataclass(frozen=True)
class LengthAudit:
    n: int
    mean_length: float | None
    #: OLS of score on length, per 100 words; None with ``reason`` when undefined.
    slope: float | None
    slope_ci: CI
    intercept: float | None
    p_value: float | None
    #: Pearson r of score and length; None when either is constant.
    r: float | None
    reason: str | None
    models: tuple[ModelLength, ...]
    #: The joint fit's within-model length effect β (per 100 words); None with ``lc_reason``.
    lc_slope: float | None
    lc_reason: str | None


def answer_words(text: str) -> int:
    """An answer's length in words, as the audits count it (``core.text.words.words``)."""
    return len(words(text))


def length_audit(rows: Iterable[tuple[str, float, int]]) -> LengthAudit:
    """``rows``: (answering model, judge score, answer length in words) per answer."""
    rows = list(rows)
    n = len(rows)
    names = sorted({m for m, _, _ in rows})
    y = np.asarray([s for _, s, _ in rows], dtype=float)
    x = np.asarray([length for _, _, length in rows], dtype=float) / PER_WORDS
    mean_x = float(x.mean()) if n else None
    fit = _ols(x, y)
    lc, lc_slope, lc_reason = _length_controlled(rows, names, x, y)
    models = []
    for m in names:
        mask = np.asarray([model == m for model, _, _ in rows])
        models.append(
            ModelLength(
                model=m,
                n=int(mask.sum()),
                mean_score=float(y[mask].mean()),
                mean_length=float(x[mask].mean() * PER_WORDS),
                lc_score=lc.get(m),
            )
        )
    return LengthAudit(
        n=n,
        mean_length=None if mean_x is None else mean_x * PER_WORDS,
        models=tuple(models),
        lc_slope=lc_slope,
        lc_reason=lc_reason,
        **fit,
    )


def _ols(x: np.ndarray, y: np.ndarray) -> dict:
    """Simple regression of y on x with a t-based 95% interval for the slope (closed form, the
    same numbers as ``scipy.stats.linregress``)."""
    n = len(x)
    undefined = dict(slope=None, slope_ci=NO_CI, intercept=None, p_value=None, r=None)
    if n < 3:
        return {**undefined, "reason": f"{n} answer(s): a slope and its interval need at least 3"}
    sxx = float(((x - x.mean()) ** 2).sum())
    if sxx == 0:
        return {**undefined, "reason": "every answer has the same length: no slope to fit"}
    from scipy import stats

    syy = float(((y - y.mean()) ** 2).sum())
    sxy = float(((x - x.mean()) * (y - y.mean())).sum())
    slope = sxy / sxx
    intercept = float(y.mean()) - slope * float(x.mean())
    df = n - 2
    sse = max(0.0, syy - slope * sxy)
    se = math.sqrt(sse / df / sxx)
    half = float(stats.t.ppf(0.975, df)) * se
    if se > 0:
        p_value: float | None = float(2 * stats.t.sf(abs(slope / se), df))
    else:  # a perfect fit: p is 0 for a real slope, undefined for a flat line
        p_value = 0.0 if slope != 0 else None
    return dict(
        slope=slope,
        slope_ci=(slope - half, slope + half),
        intercept=intercept,
        p_value=p_value,
        r=None if syy == 0 else sxy / math.sqrt(sxx * syy),
        reason=None,
    )


def _length_controlled(
    rows: Sequence[tuple[str, float, int]], names: Sequence[str], x: np.ndarray, y: np.ndarray
) -> tuple[dict[str, float], float | None, str | None]:
    """Joint OLS ``score ~ one-hot(model) + β·(x − mean x)``: each model's coefficient is its
    predicted score at the overall mean length."""
    if len(rows) < 2:
        return {}, None, "fewer than 2 answers: no length effect to fit"
    index = {m: k for k, m in enumerate(names)}
    design = np.zeros((len(rows), len(names) + 1))
    for i, (m, _, _) in enumerate(rows):
        design[i, index[m]] = 1.0
    design[:, -1] = x - x.mean()
    if np.linalg.matrix_rank(design) < design.shape[1]:
        why = (
            "every answer has the same length"
            if float(np.ptp(x)) == 0
            else "length does not vary within any model, so its effect cannot be told apart from the model's"
        )
        return {}, None, why
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return {m: float(coef[index[m]]) for m in names}, float(coef[-1]), None


# -- self-preference -----------------------------------------------------------------------------

#: (pattern in the model name, family), first match wins. The provider prefix ("openai:",
#: "ollama:" …) is dropped before matching; OpenAI's o-series (o1, o3-mini …) counts as gpt.
FAMILIES: tuple[tuple[str, str], ...] = (
    (r"claude", "claude"),
    (r"gpt|chatgpt|(?:^|/)o\d+(?:-|$)", "gpt"),
    (r"llama", "llama"),
    (r"mistral|mixtral", "mistral"),
    (r"qwen|qwq", "qwen"),
    (r"gemini", "gemini"),
    (r"gemma", "gemma"),
    (r"deepseek", "deepseek"),
)
#: Providers whose models are a family of their own whatever the name.
OWN_FAMILY_PROVIDERS = ("demo",)


def family_of(model_id: str) -> str:
    """The model's family, independent of the provider that serves it: ``openai:gpt-4o-mini`` →
    gpt, ``litellm:anthropic/claude-3-haiku`` → claude, ``openai:o3-mini`` → gpt, ``demo:*`` →
    demo; an unknown model → the first word of its last path segment (``vllm:org/Foo-7B`` → foo)."""
    provider, sep, name = model_id.partition(":")
    if not sep:
        provider, name = "", model_id
    if provider.lower() in OWN_FAMILY_PROVIDERS:
        return provider.lower()
    low = name.lower()
    for pattern, fam in FAMILIES:
        if re.search(pattern, low):
            return fam
    last = low.rstrip("/").rsplit("/", 1)[-1]
    first = re.match(r"[a-z0-9.]+", last)
    return first.group(0).strip(".") if first else last


@dataclass(frozen=True)
class SelfPreferenceAudit:
    judge_family: str
    n_own: int
    n_other: int
    mean_own: float | None
    mean_other: float | None
    #: mean_own − mean_other with a BCa bootstrap 95% interval (each side resampled on its own).
    difference: float | None
    difference_ci: CI
    reason: str | None
    #: Answers with a human score, per side.
    human_n_own: int = 0
    human_n_other: int = 0
    #: Mean (judge − human) per side, and own − other: the self-preference humans do not see.
    gap_own: float | None = None
    gap_other: float | None = None
    gap_difference: float | None = None
    gap_difference_ci: CI = NO_CI
    human_reason: str | None = None


def self_preference_audit(
    judge_family: str, rows: Iterable[tuple[str, float, float | None]], *, seed: int = SEED
) -> SelfPreferenceAudit:
    """``rows``: (answering model id, judge score, human score or None) per answer; an answer is
    "own" when :func:`family_of` its model is ``judge_family``."""
    own: list[tuple[float, float | None]] = []
    other: list[tuple[float, float | None]] = []
    for model, score, human in rows:
        (own if family_of(model) == judge_family else other).append((float(score), human))
    judge_own, judge_other = [s for s, _ in own], [s for s, _ in other]
    gaps_own = [s - h for s, h in own if h is not None]
    gaps_other = [s - h for s, h in other if h is not None]
    diff, diff_ci, reason = _two_sample(judge_own, judge_other, judge_family, seed)
    gap_diff, gap_ci, human_reason = _two_sample(gaps_own, gaps_other, judge_family, seed, what="human-scored answer")
    return SelfPreferenceAudit(
        judge_family=judge_family,
        n_own=len(own),
        n_other=len(other),
        mean_own=_mean(judge_own),
        mean_other=_mean(judge_other),
        difference=diff,
        difference_ci=diff_ci,
        reason=reason,
        human_n_own=len(gaps_own),
        human_n_other=len(gaps_other),
        gap_own=_mean(gaps_own),
        gap_other=_mean(gaps_other),
        gap_difference=gap_diff,
        gap_difference_ci=gap_ci,
        human_reason=human_reason,
    )


def _two_sample(
    own: Sequence[float], other: Sequence[float], fam: str, seed: int, what: str = "answer"
) -> tuple[float | None, CI, str | None]:
    if not own and not other:
        return None, NO_CI, f"no {what}s"
    if not other:
        return None, NO_CI, f"every {what} is from the judge's family ({fam})"
    if not own:
        return None, NO_CI, f"no {what} is from the judge's family ({fam})"
    diff = float(np.mean(own) - np.mean(other))
    return diff, difference_ci(own, other, seed=seed), None


def difference_ci(a: Sequence[float], b: Sequence[float], *, level: float = 0.95, seed: int = SEED) -> CI:
    """BCa bootstrap interval of mean(a) − mean(b), each sample resampled independently
    (``scipy.stats.bootstrap``, 2000 resamples, seeded). ``core.metrics.bootstrap_ci`` is the
    one-sample version. (None, None) when a side has fewer than 2 values or BCa is undefined;
    (d, d) when both sides are constant."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(xa) < 2 or len(xb) < 2:
        return NO_CI
    d = float(xa.mean() - xb.mean())
    if np.all(xa == xa[0]) and np.all(xb == xb[0]):
        return (d, d)
    from scipy.stats import bootstrap

    def statistic(u: np.ndarray, v: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(u, axis=axis) - np.mean(v, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # degenerate BCa: reported as None below
        ci = bootstrap(
            (xa, xb),
            statistic,
            method="BCa",
            n_resamples=2000,
            confidence_level=level,
            rng=np.random.default_rng(seed),
        ).confidence_interval
    low, high = float(ci.low), float(ci.high)
    if np.isnan(low) or np.isnan(high):
        return NO_CI
    return (low, high)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _share(k: int, n: int) -> float | None:
    return k / n if n else None
