"""Timeline row labels and pane scores say what they show: a task session's title (PersonaMem's message
range, PersonaMem-v3's app and action), the preferences it states, its expression type, CUPID's
context factor in place of the title."""

from core.history.timeline import TimelineRow
from tui.widgets.timeline import row_label


def row(**fields) -> TimelineRow:
    return TimelineRow(position=0, session_ids=("s",), **fields)


def test_a_task_session_shows_its_title_and_preferences():
    assert row_label(row(kind="task", title="instagram like", preference_ids=("p0001",))) == "task instagram like p0001"
    assert row_label(row(kind="task")) == "task"


def test_cupid_tasks_show_their_factor_not_the_same_text_twice():
    label = row_label(row(kind="task", title="Dr. Lee", context_factor="Dr. Lee", preference_ids=("p1",)))
    assert label == "task p1 [Dr. Lee]"


def test_other_kinds_keep_their_label():
    assert row_label(row(kind="life_event", title="Session 3")) == "life"
    assert row_label(row(kind="preference", title="x", preference_ids=("p2",), expression_type=4)) == "pref p2 E4"


def test_pane_scores_show_three_significant_digits():
    from core.judges.base import Judgment
    from tui.widgets.response_pane import scores_text

    def judged(score: float, top: float) -> Judgment:
        return Judgment(
            "pmv3-slice", "held_out_score", score, "", "", True, "metric", "v1", scale_min=0.0, scale_max=top
        )

    shown = scores_text([judged(0.0520771, 1.0), judged(4.0, 5.0), judged(3.6666667, 5.0)], False).plain
    assert "held_out_score 0.0521/1" in shown and "4/5" in shown and "3.67/5" in shown
