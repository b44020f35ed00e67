"""Quote-based evidence: an answer that quotes a session is located in the history."""

from __future__ import annotations

from core.analysis.mentions import evidence_mentions
from core.analysis.quotes import locate_quotes, quoted_spans, tokens_after, with_quotes

SESSIONS = {
    "s1": "I work night shifts at the hospital,\nso mornings are for sleep.",
    "s2": "We talked about the weather and the weather only.",
    "gold": "I am vegetarian and I never eat fish.",
}


def test_quoted_spans_take_real_quotes_and_drop_ellipses():
    answer = 'Since you mentioned "I work night   shifts at the…", and “we talked about the weather”, yes "ok".'
    assert quoted_spans(answer) == ["I work night   shifts at the", "we talked about the weather"]
    assert quoted_spans("It's the user's choice, isn't it") == []
    nested = 'Since you mentioned "The plan is "no clouds". I even booked a minibus for the…", fine.'
    assert quoted_spans(nested) == ["The plan is", "I even booked a minibus for the"]


def test_locate_quotes_is_whitespace_and_case_insensitive():
    answer = 'You said "i WORK night shifts at the hospital, so mornings" earlier.'
    assert locate_quotes(SESSIONS, answer) == {"s1": ["i WORK night shifts at the hospital, so mornings"]}
    assert locate_quotes(SESSIONS, 'You said "something nobody ever wrote down"') == {}


def test_a_quoted_session_that_is_neither_gold_nor_retrieved_gets_a_row():
    answers = {"demo:retrieval": 'Since you mentioned "I work night shifts at the…", rest well.', "demo:generic": "Hi."}
    rows = evidence_mentions(SESSIONS, question="What should I eat?", gold=["gold"], answers=answers)
    assert [r.session_id for r in rows] == ["gold"]  # the words-only view misses the quoted session
    rows = with_quotes(rows, SESSIONS, answers, {"s1": 120})
    assert [r.session_id for r in rows] == ["gold", "s1"]
    quoted = rows[1]
    assert not quoted.gold and quoted.tokens_to_query == 120
    assert quoted.mentioned_by("demo:retrieval") and not quoted.mentioned_by("demo:generic")
    assert quoted.mentioned["demo:retrieval"][0] == "“I work night shifts at the”"


def test_a_quote_of_the_gold_session_marks_its_row():
    answers = {"m": 'You told me "I am vegetarian and I never eat fish".'}
    rows = evidence_mentions(SESSIONS, question="vegetarian fish", gold=["gold"], answers=answers)
    rows = with_quotes(rows, SESSIONS, answers)
    assert len(rows) == 1 and rows[0].mentioned["m"][0].startswith("“I am vegetarian")


def test_tokens_after_counts_what_follows_each_session():
    assert tokens_after([("a", 10), ("b", 5), ("c", 7)]) == {"c": 0, "b": 7, "a": 12}
