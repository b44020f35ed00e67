"""The ``semantic`` half of PersonaMem-v3's similarity (PROTOCOL.md §4.2): the cosine of normalised
``all-MiniLM-L6-v2`` embeddings of the item text and the response. prefscope always has that model
(bundled, :class:`core.history.retrieval.Embedder`, the path OP-Bench's diversity uses), so it is
the default; the official fallback without sentence-transformers (token Jaccard,
:func:`core.benchmarks.personamem_v3.metrics.jaccard`) is available by name for comparison with
runs made in such an environment, never chosen silently.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.benchmarks.personamem_v3.metrics import jaccard

MINILM = "minilm"
JACCARD = "jaccard"
ENGINES = (MINILM, JACCARD)


class MiniLMCosine:
    """``semantic(text, response)`` with the bundled model; vectors kept per text for the judge's batch."""

    def __init__(self) -> None:
        from core.history.retrieval import Embedder

        self.embedder = Embedder()
        self._vectors: dict[str, list[float]] = {}

    @property
    def id(self) -> str:
        return self.embedder.id

    def prime(self, texts: Sequence[str]) -> None:
        """Embed every text not seen yet in one batch."""
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            for text, vec in zip(new, self.embedder.embed(new)):
                self._vectors[text] = [float(x) for x in vec]

    def __call__(self, text: str, response: str) -> float:
        self.prime([text, response])
        a, b = self._vectors[text], self._vectors[response]
        return float(sum(x * y for x, y in zip(a, b)))  # both L2-normalised: the cosine


class TokenJaccard:
    """The official fallback (sentence-transformers absent): token Jaccard; scores run much lower."""

    id = "token-jaccard"

    def prime(self, texts: Sequence[str]) -> None:
        return None

    def __call__(self, text: str, response: str) -> float:
        return jaccard(text, response)


def engine(name: str = MINILM) -> MiniLMCosine | TokenJaccard:
    if name == MINILM:
        return MiniLMCosine()
    if name == JACCARD:
        return TokenJaccard()
    raise ValueError(f"unknown semantic engine {name!r}; expected one of {', '.join(ENGINES)}")
