"""Placeholder users for answers whose dataset prefscope does not hold (lm-eval, OpenAI Batch and
Evals files): one user per sample, named by the file's own ids, with one open query. Storage puts
an answer there only while no stored user of that id exists (``storage.imported_runs``)."""

from __future__ import annotations

import re

from core.model import UserBundle

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(value: str) -> str:
    """An id made of the file's own names: unsafe runs become ``-`` (``gsm8k/3`` -> ``gsm8k-3``)."""
    return _UNSAFE.sub("-", value).strip("-")[:120] or "sample"


def placeholder_user(
    fmt: str,
    uid: str,
    qid: str,
    name: str,
    question: str,
    *,
    source_file: str,
    preference: str | None = None,
    reference_answer: str | None = None,
    meta: dict | None = None,
) -> UserBundle:
    """A user ``uid`` whose one open query ``qid`` is ``question`` (a stand-in text when the file
    does not give it), with the sample's preference and reference answer when the file has them."""
    prefs = [{"id": "p1", "text": preference, "origin": "original"}] if preference else []
    return UserBundle.model_validate(
        {
            "user": {
                "id": uid,
                "name": name,
                "source": fmt,
                "meta": {"placeholder": True, "from": source_file, **(meta or {})},
            },
            "preferences": prefs,
            "queries": [
                {
                    "id": qid,
                    "kind": "open",
                    "text": question or f"({fmt} sample {name}: its prompt is not in the file)",
                    "preference_id": "p1" if prefs else None,
                    "answer": reference_answer or None,
                    "meta": {"placeholder": True, **(meta or {})},
                }
            ],
        }
    )
