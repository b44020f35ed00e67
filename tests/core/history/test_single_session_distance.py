"""A history of one user session (a PrefEval user) in a filler context: the filler sits between
the preference and the question, so its distance is the filler's size, not 0."""

from __future__ import annotations

from core.formats import load_path
from core.history.build import build_context
from tests.conftest import SAMPLE_DATA
from tests.core.formats.builders import prefeval_files, write_tree


def test_prefeval_user_in_normal_context_has_its_preference_far_from_the_question(tmp_path):
    result = load_path(write_tree(tmp_path, prefeval_files()))
    bundle = result.bundles[0]
    pools = load_path(SAMPLE_DATA / "filler").fillers
    ctx = build_context(bundle, query=bundle.queries[0], expression_type=1, config="normal", filler_pools=pools)
    assert [cs.is_filler for cs in ctx.sessions][:2] == [False, True]  # the preference first
    (evidence,) = ctx.evidence
    assert evidence.position == 0
    assert evidence.tokens_to_query == ctx.interval_tokens > 34_000
    assert any("one user session" in n for n in ctx.notes)


def test_several_user_sessions_keep_the_filler_between_them(tmp_path):
    bundle = load_path(SAMPLE_DATA / "users" / "maya.json").bundles[0]
    pools = load_path(SAMPLE_DATA / "filler").fillers
    ctx = build_context(bundle, query="p1-open", expression_type=4, config="normal", filler_pools=pools)
    assert not ctx.sessions[-1].is_filler  # interval filler never lands after the last user session
    assert not any("one user session" in n for n in ctx.notes)
