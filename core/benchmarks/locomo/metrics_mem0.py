"""mem0's LoCoMo metrics (mem0ai/mem0 @ b3ede5b, ``evaluation/metrics/utils.py``, itself credited to
A-Mem, WujiangXu/AgenticMemory; Apache-2.0), and the rounding LoCoMo applies to the per-question
scores it stores. Pure functions; nltk is imported on first use.

mem0's F1 (:func:`mem0_f1`) is NOT LoCoMo's F1 (:func:`core.benchmarks.locomo.metrics.locomo_score`):
no stemming, no article / ``and`` removal, token *sets* (duplicates collapse), only ``. , ! ?``
become spaces (``'`` and ``:`` stay attached), and no per-category rules. Its BLEU-1
(:func:`mem0_bleu1`) is NLTK's ``sentence_bleu`` of the lower-cased, ``word_tokenize``-d prediction
against the one lower-cased, tokenised gold, weights (1, 0, 0, 0), smoothing method 1 (clipped
unigram precision times the brevity penalty). An empty prediction or gold scores 0 on both.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

#: How mem0's code is named where its scores are shown.
MEM0_SOURCE = "mem0 evaluation/metrics/utils.py @b3ede5b"
_MEM0_SPACED = (".", ",", "!", "?")


def mem0_tokens(text: object) -> list[str]:
    """``simple_tokenize``: ``str``, lower-case, ``. , ! ?`` -> spaces, split on whitespace."""
    out = str(text).lower()
    for ch in _MEM0_SPACED:
        out = out.replace(ch, " ")
    return out.split()


def mem0_f1(prediction: object, gold: object) -> float:
    """mem0's token-set F1 (``calculate_metrics``'s ``f1``)."""
    if not prediction or not gold:
        return 0.0
    pred = set(mem0_tokens(str(prediction).strip()))
    ref = set(mem0_tokens(str(gold).strip()))
    if not pred or not ref:
        return 0.0
    common = pred & ref
    p, r = len(common) / len(pred), len(common) / len(ref)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


@cache
def _word_tokenize() -> tuple[Any, str]:
    """``nltk.word_tokenize`` when NLTK's punkt data is installed; else NLTK's own word tokenizer on
    the whole string (what word_tokenize does per sentence: identical for one-sentence answers)."""
    import nltk  # type: ignore[import-untyped]

    try:
        nltk.word_tokenize("Probe. Two sentences.")
        return nltk.word_tokenize, "nltk.word_tokenize"
    except LookupError:
        from nltk.tokenize import NLTKWordTokenizer  # type: ignore[import-untyped]

        return NLTKWordTokenizer().tokenize, "NLTKWordTokenizer (no punkt data: one sentence)"


def tokenizer_name() -> str:
    """Which tokenizer :func:`mem0_bleu1` uses on this machine (kept with every score)."""
    return _word_tokenize()[1]


def mem0_bleu1(prediction: object, gold: object) -> float:
    """mem0's BLEU-1 (``calculate_bleu_scores``'s ``bleu1``)."""
    if not prediction or not gold:
        return 0.0
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu  # type: ignore[import-untyped]

    tokenize = _word_tokenize()[0]
    pred = tokenize(str(prediction).strip().lower())
    ref = [tokenize(str(gold).strip().lower())]
    try:
        return float(sentence_bleu(ref, pred, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1))
    except Exception:  # mem0's code scores any BLEU error as 0.0
        return 0.0


# -- LoCoMo's stored rounding ---------------------------------------------------------------------


def locomo_round(score: float, category: int | None, digits: int = 3) -> float:
    """The value LoCoMo's ``evaluate_qa.py`` stores as ``<model>_f1``: ``round(score, 3)`` of what
    ``eval_question_answering`` returned. Category 1's multi-answer F1 is an ``np.mean``, an
    ``np.float64``, whose ``round`` rounds the scaled binary value half to even (0.2625 -> 0.262);
    every other category's score is a Python float or int, rounded by Python (0.2625 -> 0.263)."""
    if category == 1:
        return float(round(np.float64(score), digits))
    return float(round(float(score), digits))


def matches_recorded(recorded: float, computed: float, category: int | None) -> bool:
    """Whether a published per-question ``_f1`` is what LoCoMo's code stores for ``computed``."""
    return locomo_round(computed, category) == float(recorded)
