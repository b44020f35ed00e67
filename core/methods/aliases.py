"""Neutral session names for prompts: ``S1, S2, …`` in prompt order instead of dataset ids.

Dataset ids carry gold (CUPID's ``cupid-<persona>-<consistent|contrastive|changing>-s03`` names the
instance type; PrefEval and LoCoMo ids encode structure), so a prompt that must let a model cite
turns shows an alias and the plan or extraction keeps the table to map the reply back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from core.model import split_turn_ref, turn_ref


@dataclass(frozen=True)
class Aliases:
    #: alias -> real session key, in prompt order.
    real: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_sessions(cls, keys: Iterable[str]) -> Aliases:
        unique = list(dict.fromkeys(keys))
        return cls({f"S{n}": key for n, key in enumerate(unique, 1)})

    @cached_property
    def _by_key(self) -> dict[str, str]:
        return {k: a for a, k in self.real.items()}

    def alias(self, key: str) -> str:
        try:
            return self._by_key[key]
        except KeyError:
            raise KeyError(f"session {key!r} has no alias in this prompt") from None

    def alias_ref(self, ref: str) -> str:
        """``<real session>#3`` -> ``S2#3``."""
        session, index = split_turn_ref(ref)
        return turn_ref(self.alias(session), index)

    def to_real(self, ref: str) -> str | None:
        """``S2#3`` (or ``S2``) -> the real turn ref (session key); None when the alias is unknown."""
        session, sep, index = ref.strip().partition("#")
        key = self.real.get(session.strip().upper())
        if key is None:
            return None
        return f"{key}#{index.strip()}" if sep else key
