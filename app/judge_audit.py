"""Is this judge biased? What `prefscope audit-judge` reads and stores: pairs of answers to the same
prompt and the judge's verdicts on them in both orders, its scores with the answers' lengths and
models, and its test–retest (``storage.judge_audit``, ``storage.report.retest_table``)."""

from __future__ import annotations

from app.base import Base


class JudgeAudit(Base):
    def same_prompt_pairs(self, f) -> list:
        """Every two final, finished answers to the same prompt among the answers ``f`` selects."""
        from storage.judge_audit import same_prompt_pairs

        return same_prompt_pairs(self.db, f)

    def stored_pair_orders(self, f, judge_model: str):
        """(the judge's verdicts per pair in both orders, the human verdict per pair)."""
        from storage.judge_audit import stored_pair_orders

        return stored_pair_orders(self.db, f, judge_model)

    def scored_answers(self, f, judge_model: str, kind: str, dimension: str) -> list:
        """The judge's latest parsed score on each answer, with the answer's model and length."""
        from storage.judge_audit import scored_answers

        return scored_answers(self.db, f, judge_model, kind, dimension)

    def judged_dimensions(self, f, judge_model: str) -> list[str]:
        """``kind:dimension`` of every score the judge gave in the runs (pairwise verdicts aside)."""
        from storage.judge_audit import judged_dimensions

        return judged_dimensions(self.db, f, judge_model)

    def retest_table(self, metric: str, f=None):
        """Each judge's agreement with itself on the answers it judged more than once."""
        from storage.report import retest_table

        return retest_table(self.db, metric, f)

    def response_texts(self, response_ids: list[str]) -> dict[str, str]:
        """The stored text of each answer, by response id."""
        ids = list(dict.fromkeys(response_ids))
        out: dict[str, str] = {}
        for i in range(0, len(ids), 500):  # well under SQLite's bound on parameters
            part = ids[i : i + 500]
            marks = ", ".join("?" * len(part))
            out.update(self.db.execute(f"SELECT id, text FROM responses WHERE id IN ({marks})", part).fetchall())
        return out

    def query_and_preference(self, run_id: str) -> tuple[str, str]:
        """The run's query text and the preference it tests (what a pair judge is shown)."""
        from storage.annotation_queues import query_and_preference

        return query_and_preference(self.db, run_id)
