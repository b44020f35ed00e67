"""What a judge bias audit reads (and, for position, stores) for :mod:`core.analysis.judge_audit`.

- :func:`same_prompt_pairs` – every two finished answers to the same prompt (the pairs a pairwise
  judge is audited on; also a ``pair`` annotation queue's items)
- :func:`stored_pair_orders` – a judge's two-order verdicts on those pairs, and humans' verdicts
- :func:`scored_answers` – a judge's latest score per answer with the answer's model, length and
  the mean human score on it
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from sqlite_utils import Database

from core.analysis.judge_audit import answer_words
from storage.export import RunFilter, run_where
from storage.report import LATEST_JUDGMENT

#: What makes two answers answers to the same prompt: the run's spec without its models, judges
#: and batch name (a batch runs each model as its own cell).
SAME_PROMPT = "json_remove(r.spec, '$.models', '$.judges', '$.label')"


@dataclass(frozen=True)
class AnswerPair:
    run_id: str  # answer 1's run (its judgments are stored there)
    response_1: str
    response_2: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.response_1, self.response_2)


def same_prompt_pairs(db: Database, f: RunFilter, extra_where: str = "", extra_args: Iterable = ()) -> list[AnswerPair]:
    """Every two final, finished answers to the same prompt, in a stable order."""
    args: list = []
    rw = run_where(f, args)
    args += list(extra_args)
    sql = f"""SELECT r.id, p.id, {SAME_PROMPT} FROM responses p JOIN runs r ON r.id = p.run_id
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        LEFT JOIN preferences pr ON pr.user_id = r.user_id AND pr.id = q.preference_id
        WHERE p.is_final = 1 AND p.status = 'ok' AND {rw}{extra_where}
        ORDER BY r.created_at, r.id, p.slot"""
    same: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for run, rid, prompt in db.execute(sql, args):
        same[prompt].append((run, rid))
    return [AnswerPair(a[0], a[1], b[1]) for answers in same.values() for a, b in combinations(answers, 2)]


def stored_pair_orders(
    db: Database, f: RunFilter, judge_model: str
) -> tuple[dict[tuple[str, str], list[float | None]], dict[tuple[str, str], float]]:
    """(the judge's latest outcome per shown order for each (answer 1, answer 2): index 0 with
    answer 1 shown first, 1 with answer 2 first; the mean human outcome of answer 1 per pair)."""
    args: list = [judge_model]
    rw = run_where(f, args)
    judged: dict[tuple[str, str], list[float | None]] = {}
    humans: dict[tuple[str, str], list[float]] = defaultdict(list)
    rows = db.execute(
        f"""SELECT j.response_id, j.score, j.parse_ok, j.human, j.extra FROM judgments j
        JOIN runs r ON r.id = j.run_id
        WHERE j.kind = 'pairwise' AND j.dimension = 'preferred' AND (j.judge_model = ? OR j.human = 1) AND {rw}
        ORDER BY j.id""",
        args,
    )
    for rid, score, ok, human, extra in rows:
        info = json.loads(extra or "{}")
        other = info.get("other_response")
        if not other:
            continue
        value = score if ok else None
        if human:
            if value is not None:
                humans[(rid, other)].append(value)
                humans[(other, rid)].append(1.0 - value)
            continue
        shown = info.get("shown_first")
        if shown in (1, 2):
            judged.setdefault((rid, other), [None, None])[shown - 1] = value  # ordered by id: latest wins
    return judged, {k: sum(v) / len(v) for k, v in humans.items()}


@dataclass(frozen=True)
class ScoredAnswer:
    response_id: str
    model: str
    words: int
    score: float
    #: Mean human score on the same kind and dimension (None: no human scored it).
    human: float | None


def scored_answers(db: Database, f: RunFilter, judge_model: str, kind: str, dimension: str) -> list[ScoredAnswer]:
    """The judge's latest parsed score on each answer, with the answer's model and length in words."""
    args: list = [kind, dimension, judge_model]
    rw = run_where(f, args)
    rows = db.execute(
        f"""SELECT p.id, p.model, p.text, j.score,
            (SELECT avg(h.score) FROM judgments h WHERE h.response_id = p.id AND h.kind = j.kind
               AND h.dimension = j.dimension AND h.human = 1 AND h.score IS NOT NULL)
        FROM judgments j JOIN responses p ON p.id = j.response_id JOIN runs r ON r.id = j.run_id
        WHERE j.kind = ? AND j.dimension = ? AND j.judge_model = ? AND j.parse_ok = 1 AND j.score IS NOT NULL
          AND {rw} AND {LATEST_JUDGMENT}
        ORDER BY j.id""",
        args,
    )
    return [
        ScoredAnswer(rid, model, answer_words(text), float(score), human) for rid, model, text, score, human in rows
    ]


def judged_dimensions(db: Database, f: RunFilter, judge_model: str) -> list[str]:
    """``kind:dimension`` of every score the judge gave in the runs (pairwise verdicts aside)."""
    args: list = [judge_model]
    rw = run_where(f, args)
    return [
        f"{k}:{d}"
        for k, d in db.execute(
            f"""SELECT DISTINCT j.kind, j.dimension FROM judgments j JOIN runs r ON r.id = j.run_id
            WHERE j.judge_model = ? AND j.kind != 'pairwise' AND j.dimension != '*' AND j.response_id IS NOT NULL
              AND {rw} ORDER BY j.kind, j.dimension""",
            args,
        )
    ]
