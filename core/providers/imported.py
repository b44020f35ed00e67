"""``imported:<model>``: answers produced outside prefscope (``prefscope import-results``).

Their runs are stored whole, so nothing is ever generated under this prefix. The provider exists
so that those runs open, estimate and list like any other; asked to stream, it says why it cannot.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from core.plan import Message
from core.providers.base import CALLS_A_MODEL, ModelSpec
from core.providers.events import Error, StreamEvent, Usage

if TYPE_CHECKING:
    from core.ports import ResponseCache
    from core.settings import Settings


class ImportedProvider:
    name = "imported"
    capabilities = CALLS_A_MODEL

    @classmethod
    def from_settings(cls, settings: Settings | None, response_cache: ResponseCache | None) -> ImportedProvider:
        return cls()

    async def stream(self, spec: ModelSpec, messages: list[Message]) -> AsyncGenerator[StreamEvent, None]:
        yield Error(
            f"{spec.id} is a recorded answer imported with `prefscope import-results`; it cannot be generated "
            f"again. Pick a model that runs here (e.g. demo:oracle, or the real {spec.model} through its provider).",
            kind="config",
            before_first_byte=True,
        )

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        return None  # the source does not say what it cost

    def context_window(self, spec: ModelSpec) -> int | None:
        return None
