"""What the headless core needs from outside, as Protocols; ``storage`` implements them."""

from __future__ import annotations

from typing import Protocol


class EmbeddingCache(Protocol):
    """Vectors keyed by (embedding model name, sha256 of the text)."""

    def get_many(self, model: str, text_hashes: list[str]) -> dict[str, bytes]: ...

    def put_many(self, model: str, vectors: dict[str, bytes]) -> None: ...


class ResponseCache(Protocol):
    """Recorded responses keyed by the sha256 of a canonical request, for replay."""

    def get(self, request_hash: str) -> dict | None: ...

    def put(self, request_hash: str, record: dict) -> None: ...


class SummaryCache(Protocol):
    """Model-written session summaries (CUPID's summaries setting), keyed by (model, session hash)."""

    def get_summary(self, model: str, text_hash: str) -> str | None: ...

    def put_summary(self, model: str, text_hash: str, summary: str) -> None: ...


class TokenCountCache(Protocol):
    """Token counts keyed by (encoding, 16-byte digest of the text), kept between processes."""

    def lookup(self, encoding: str, digests: list[bytes]) -> dict[bytes, int]: ...

    def remember(self, encoding: str, counts: dict[bytes, int]) -> None: ...
