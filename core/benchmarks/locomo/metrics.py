"""LoCoMo's QA score, as its official evaluation code (snap-research/locomo @ 9228632,
task_eval/evaluation.py): normalised token F1 with the Porter stemmer, the category-1
multi-answer F1 and the category-5 "not mentioned" rule (:func:`locomo_score`). Pure functions;
nltk is imported on first use."""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import cache
from typing import Any

import numpy as np

LOCOMO_UNANSWERABLE_MARKS = ("no information available", "not mentioned")
_LOCOMO_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


def locomo_normalize(text: str) -> str:
    """``normalize_answer``: drop commas, lower-case, drop ASCII punctuation, articles and "and"
    become spaces, whitespace collapsed."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return " ".join(_LOCOMO_ARTICLES.sub(" ", text).split())


@cache
def _porter() -> Any:  # imported on first use: nltk is only needed for LoCoMo scores
    from nltk.stem import PorterStemmer  # type: ignore[import-untyped]

    return PorterStemmer()


def locomo_token_f1(prediction: str, gold: str) -> float:
    """``f1_score``: F1 of the multiset overlap of Porter-stemmed normalised tokens (0 on no overlap)."""
    stem = _porter().stem
    pred = [stem(t) for t in locomo_normalize(prediction).split()]
    ref = [stem(t) for t in locomo_normalize(gold).split()]
    overlap = sum((Counter(pred) & Counter(ref)).values())
    if overlap == 0:
        return 0.0
    p, r = overlap / len(pred), overlap / len(ref)
    return 2 * p * r / (p + r)


def locomo_multi_f1(prediction: str, gold: str) -> float:
    """``f1`` (category 1): mean over the gold's comma-separated parts of the best part-F1."""
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return float(np.mean([max(locomo_token_f1(p, g) for p in preds) for g in golds]))


def locomo_score(category: int, prediction: str, gold: str) -> float:
    """``eval_question_answering`` for one question. Category 3 keeps the gold before its first
    ``;``; category 5 scores 1 iff the prediction says the answer is not there (gold unused)."""
    if category in (2, 3, 4):
        return locomo_token_f1(prediction, gold.split(";")[0].strip() if category == 3 else gold)
    if category == 1:
        return locomo_multi_f1(prediction, gold)
    if category == 5:
        low = prediction.lower()
        return 1.0 if any(mark in low for mark in LOCOMO_UNANSWERABLE_MARKS) else 0.0
    raise ValueError(f"LoCoMo category must be 1-5, got {category!r}")
