"""Hand-built domain objects that set every field at least once, for storage round trips."""

from __future__ import annotations

import datetime as dt

from core.formats.base import ImportResult
from core.model import Attribute, FillerPool, LifeEvent, Preference, Query, Session, Turn, User, UserBundle


def rich_bundle(user_id: str = "alex", *, n_filler: int = 3, marker: str = "") -> UserBundle:
    """A RealPref/CUPID/LoCoMo-flavoured user touching every field, defaults and non-defaults."""
    sessions = [
        Session(
            id="s-life",
            date=dt.date(2011, 6, 2),
            kind="life_event",
            title="Moving to Lyon",
            turns=[
                Turn(role="user", content=f"We just moved to Lyon {marker}"),
                Turn(role="assistant", content="Congratulations! How is the new flat?", source_id="D1:2"),
            ],
            meta={"origin": {"dialog": 7}, "tags": ["move", "é"]},
        ),
        Session(
            id="s-pref-1",
            date=dt.date(2014, 6, 1),
            kind="preference",
            expression_type=1,
            preference_ids=["p1"],
            turns=[Turn(role="user", content="I really prefer vegetarian restaurants with quiet terraces.")],
        ),
        Session(
            id="s-pref-4a",
            kind="preference",
            expression_type=4,
            preference_ids=["p1", "p2"],
            turns=[
                Turn(role="user", content="That steakhouse last week… never again, honestly."),
                Turn(role="assistant", content="Sorry it went badly. What happened?"),
                Turn(role="user", content='The "quiet" table was next to the kitchen; 100% noise.'),
            ],
        ),
    ]
    sessions += [
        Session(
            id=f"s-fill-{i}",
            kind="filler",
            turns=[
                Turn(role="user", content=f"Random chit-chat number {i}"),
                Turn(role="assistant", content="Sure, let's chat."),
            ],
        )
        for i in range(n_filler)
    ]
    sessions.append(
        Session(
            id="s-task",
            date=dt.date(2016, 11, 5),
            kind="task",
            context_factor="Dr. Chen",
            contextual_preference="Wants citations in APA style",
            title="Report for Dr. Chen",
            turns=[
                Turn(role="user", content="Draft the methods section for Dr. Chen."),
                Turn(role="assistant", content="Here is a draft…"),
                Turn(role="user", content="Use APA citations, as always for her."),
            ],
        )
    )
    preferences = [
        Preference(
            id="p1",
            text="Prefers vegetarian restaurants",
            topic="food/dining",
            type="positive",
            formed=LifeEvent(date=dt.date(2013, 1, 1), event="Became vegetarian"),
            evidence={1: ["s-pref-1"], 4: ["s-pref-4a"]},
        ),
        Preference(
            id="p2",
            text="Avoids noisy places",
            type="negative",
            formed=LifeEvent(event="Tinnitus"),
            evidence={0: ["s-pref-4a"]},
        ),
        Preference(
            id="g1",
            text="Would like a quiet vegetarian café",
            origin="generalized",
            derived_from=["p1", "p2"],
            infer_reason="Both together",
        ),
    ]
    queries = [
        Query(
            id="q1",
            kind="open",
            text="Where should we eat tonight?",
            preference_id="p1",
            group="g-1",
            answer="A quiet vegetarian place",
            explanation="p1 + p2",
            meta={"n": 1},
        ),
        Query(
            id="q1-mcq",
            kind="mcq",
            text="Pick a restaurant",
            preference_id="p1",
            group="g-1",
            options=["Steakhouse", "Vegan bistro", "BBQ", "Sushi"],
            answer="B",
        ),
        Query(id="q1-tf", kind="tf", text="Would a steakhouse suit me?", preference_id="p1", answer="no"),
        Query(id="q-gen", kind="open", text="Any café ideas?", preference_id="g1"),
        Query(
            id="q-cupid",
            kind="open",
            text="Write the results section for Dr. Chen.",
            evidence_sessions=["s-task"],
            evidence_turns=["s-task#2"],
            gold_preference="APA citations",
            checklist=["uses APA", "cites sources"],
            context_factor="Dr. Chen",
            instance_type="consistent",
        ),
    ]
    attributes = [
        Attribute(
            id="a1",
            text="Is vegetarian",
            reasoning="Says so",
            confidence=0.9,
            evidence_turns=["s-pref-1#0"],
            source="gpt-x",
        ),
        Attribute(id="a2", text="Lives in Lyon"),
    ]
    user = User(
        id=user_id,
        name="Alex Martin",
        demographics={"age": "34", "city": "Lyon"},
        persona="A researcher.",
        extended_persona="Longer persona…",
        source="sample",
        life_events=[LifeEvent(date=dt.date(2011, 6, 1), event="Moved"), LifeEvent(event="Undated")],
        meta={"split": "dev", "nested": {"k": [1, 2.5, None, True]}},
    )
    return UserBundle(user=user, sessions=sessions, preferences=preferences, queries=queries, attributes=attributes)


def minimal_bundle(user_id: str) -> UserBundle:
    return UserBundle(
        user=User(id=user_id),
        sessions=[Session(id="only", kind="life_event", turns=[Turn(role="user", content="hello")])],
    )


def filler_pool(pool_id: str = "pool-a", n: int = 4) -> FillerPool:
    return FillerPool(
        id=pool_id,
        name="Chit-chat",
        source="prefeval",
        sessions=[
            Session(
                id=f"f{i}",
                kind="filler",
                meta={"i": i},
                turns=[
                    Turn(role="user", content=f"Tell me a fact about otters {i}"),
                    Turn(role="assistant", content="Otters hold hands while sleeping."),
                ],
            )
            for i in range(n)
        ],
    )


def import_result(
    *bundles: UserBundle, fillers: tuple[FillerPool, ...] = (), notes: tuple[str, ...] = ()
) -> ImportResult:
    return ImportResult(format="native", bundles=list(bundles), fillers=list(fillers), notes=list(notes))
