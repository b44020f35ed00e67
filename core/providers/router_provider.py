"""``router:<name>`` – several deployments (keys, regions, servers) of one model behind one
litellm Router, defined in the config's ``[routers.<name>]`` (:class:`core.settings.Router`).

There is one Router per router definition per process, built on first use in a worker thread
(litellm is imported only then, never on start-up) and kept, so its cooldowns and rpm/tpm counts
span every call of the process. Each deployment's key is read from its ``api_key_env`` when the
Router is built. ``rpm``/``tpm`` go to litellm per deployment: ``simple-shuffle`` picks by them as
weights, the usage-based strategies keep each deployment under them.

Retries – two layers with separate jobs, and only one of them waits:

- **Inside the router: failover, never a wait.** ``num_retries`` is the number of deployments
  minus one, so a call that fails before its first byte moves on to another deployment: as many
  attempts in all as there are deployments. litellm goes on only while some deployment is healthy,
  and then without sleeping. A deployment answering 429 is cooled down for its ``retry-after``
  (litellm reads the header of that deployment's own answer; 5 s without one), so this call and
  the next ones go to the others; one that failed otherwise (a 5xx) stays eligible until litellm's
  failure-rate threshold cools it, so the same call may pick it again. Each deployment's SDK
  client has ``max_retries=0``; no fallback models are set.
- **The engine (:mod:`core.providers.retry`) remains the one retry layer for the router as a
  whole.** When every deployment failed or is cooling down, the failure reaches it as one Error:
  a rate limit's ``retry_after`` is the deployments' shortest cooldown, which it waits out before
  asking the router again – or it gives up, by its own policy, and never after text has streamed.

Why: waits and attempt counts stay decided in one place, as for every other provider, and a rate
limited deployment costs no waiting while another one can answer. Retrying the same deployment
inside litellm as well would multiply the engine's attempts and hide its waits.

A failure after text has streamed keeps the partial text: the Router re-raises the provider's
error once content was generated instead of continuing on another deployment. The price of a call
is litellm's for the model of the deployment that served it (n/a when litellm has no price): the
stream records which one in a context variable of the task that consumed it, the task in which
the engine then asks for the price.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import AsyncGenerator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.plan import Message
from core.providers.base import CALLS_A_MODEL, ModelSpec
from core.providers.events import Error, StreamEvent, Usage
from core.providers.litellm_provider import (
    classify_failure,
    load_litellm,
    messages_payload,
    model_cost,
    model_window,
    param_kwargs,
    placeholder_key,
    remember_unpriced,
    response_events,
)
from core.providers.redact import remember_key_env
from core.providers.streaming import StreamState, guarded

if TYPE_CHECKING:
    from core.ports import ResponseCache
    from core.settings import Deployment, Settings
    from core.settings import Router as RouterConfig


class RouterConfigError(ValueError):
    """A router that cannot be built as configured (e.g. a key env var that is not set)."""


@dataclass(frozen=True)
class Built:
    """A litellm Router and which of our deployments each of its deployment ids is."""

    router: object
    deployments: dict[str, tuple[int, Deployment]]


@dataclass(frozen=True)
class Served:
    router: str
    deployment: Deployment


#: The deployment that served the last router call streamed in this task (see the docstring).
_SERVED: ContextVar[Served | None] = ContextVar("router_served", default=None)
_BUILT: dict[tuple[str, str], Built] = {}
_BUILD_LOCK = threading.Lock()
#: Deployment ids must be unique across the process: litellm's failure callbacks are global, and
#: each Router cools down whichever of its deployments carries the failed id.
_SERIAL = itertools.count(1)


def router_for(name: str, config: RouterConfig) -> Built:
    """The process's Router for this definition, built on first use (imports litellm; slow once)."""
    key = (name, config.model_dump_json())
    with _BUILD_LOCK:
        built = _BUILT.get(key)
        if built is None:
            built = _BUILT[key] = _build(name, config)
        return built


def _build(name: str, config: RouterConfig) -> Built:
    load_litellm()
    from litellm import Router

    remember_unpriced(d.model for d in config.deployments)

    serial = next(_SERIAL)
    model_list = []
    deployments: dict[str, tuple[int, Deployment]] = {}
    for number, dep in enumerate(config.deployments, 1):
        dep_id = f"{name}#{number}.{serial}"
        deployments[dep_id] = (number, dep)
        model_list.append(
            {"model_name": name, "litellm_params": _litellm_params(name, number, dep), "model_info": {"id": dep_id}}
        )
    router = Router(
        model_list=model_list,
        routing_strategy=config.routing_strategy,
        num_retries=len(model_list) - 1,  # failover across deployments; the engine does the waiting
        retry_after=0,
    )
    return Built(router, deployments)


def _litellm_params(name: str, number: int, dep: Deployment) -> dict:
    params: dict = {"model": dep.model, "max_retries": 0}
    if dep.api_base:
        params["api_base"] = dep.api_base
    if dep.api_key_env:
        remember_key_env(dep.api_key_env)  # its value is redacted from every error, answer and stored text
        key = os.environ.get(dep.api_key_env)
        if not key:
            raise RouterConfigError(
                f"router {name!r} deployment {number} ({dep.model}) reads its key from ${dep.api_key_env}, "
                "which is not set; set it, or remove api_key_env from that deployment"
            )
        params["api_key"] = key
    elif key := placeholder_key(dep.model, dep.api_base):
        params["api_key"] = key
    if dep.rpm is not None:
        params["rpm"] = dep.rpm
    if dep.tpm is not None:
        params["tpm"] = dep.tpm
    return params


def not_configured(name: str, routers: Mapping[str, object]) -> str:
    """Why ``router:<name>`` cannot be used: which routers the config does define."""
    from core.settings import did_you_mean

    known = ", ".join(f"router:{n}" for n in sorted(routers)) or "none"
    return (
        f"no router {name!r} in the config{did_you_mean(name, sorted(routers))} (configured: {known}); "
        f"define [routers.{name}] with its [[routers.{name}.deployments]]"
    )


def describe(number: int, dep: Deployment) -> str:
    return f"deployment {number}, {dep.model}" + (f" at {dep.api_base}" if dep.api_base else "")


class RouterProvider:
    name = "router"
    capabilities = CALLS_A_MODEL

    def __init__(self, routers: dict[str, RouterConfig], *, read_timeout_s: float = 60.0, drop_params: bool = True):
        self.routers = routers
        self.read_timeout_s = read_timeout_s
        self.drop_params = drop_params

    @classmethod
    def from_settings(cls, settings: Settings | None, response_cache: ResponseCache | None) -> RouterProvider:
        return cls(dict(settings.routers) if settings else {})

    async def stream(self, spec: ModelSpec, messages: list[Message]) -> AsyncGenerator[StreamEvent, None]:
        _SERVED.set(None)
        name = spec.model
        config = self.routers.get(name)
        if config is None:
            yield Error(not_configured(name, self.routers), kind="config", before_first_byte=True)
            return
        try:
            built = await asyncio.to_thread(router_for, name, config)
        except ImportError as exc:
            yield Error(
                f"litellm is not importable ({exc}); reinstall prefscope", kind="config", before_first_byte=True
            )
            return
        except RouterConfigError as exc:
            yield Error(str(exc), kind="config", before_first_byte=True)
            return
        except Exception as exc:  # noqa: BLE001 - a definition litellm refuses is a config error, not a crash
            yield Error(f"router {name!r} cannot be built: {exc}", kind="config", before_first_byte=True)
            return
        label = f"router {name}"

        def classify(exc: BaseException, state: StreamState) -> Error:
            return self._classify(exc, state, built)

        producer = self._produce(built, name, spec, messages)
        async for event in guarded(producer, timeout_s=spec.params.timeout_s, label=label, classify=classify):
            yield event

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        """litellm's price for the deployment that served the call streamed last in this task; asked
        outside one (an estimate), the dearest deployment's, when every deployment has a price."""
        served = _SERVED.get()
        if served is not None and served.router == spec.model:
            return model_cost(served.deployment.model, usage.input_tokens, usage.output_tokens)
        config = self.routers.get(spec.model)
        if config is None:
            return None
        costs = [model_cost(d.model, usage.input_tokens, usage.output_tokens) for d in config.deployments]
        return None if any(c is None for c in costs) else max(c for c in costs if c is not None)

    def context_window(self, spec: ModelSpec) -> int | None:
        """The smallest window litellm's map gives the deployments' models (any may serve a call)."""
        config = self.routers.get(spec.model)
        windows = [w for d in (config.deployments if config else []) if (w := model_window(d.model))]
        return min(windows) if windows else None

    # ---- internals ----------------------------------------------------------------------------
    def request_kwargs(self, name: str, spec: ModelSpec, messages: list[Message]) -> dict:
        timeout = min(self.read_timeout_s, spec.params.timeout_s)
        kwargs: dict = {
            "model": name,
            "messages": messages_payload(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": timeout,
            "stream_timeout": timeout,
            "drop_params": self.drop_params,
        }
        return kwargs | param_kwargs(spec.params)

    async def _produce(self, built: Built, name: str, spec: ModelSpec, messages: list[Message]):
        response = await built.router.acompletion(**self.request_kwargs(name, spec, messages))  # type: ignore[attr-defined]
        hidden = getattr(response, "_hidden_params", None) or {}
        served = built.deployments.get(str(hidden.get("model_id")))
        if served is not None:
            _SERVED.set(Served(name, served[1]))
        async for event in response_events(response):
            yield event

    def _classify(self, exc: BaseException, state: StreamState, built: Built) -> Error:
        from litellm.types.router import RouterRateLimitError, RouterRateLimitErrorBasic

        if isinstance(exc, RouterRateLimitError | RouterRateLimitErrorBasic):
            return self._no_deployment(exc, state)
        failed = built.deployments.get(str(getattr(exc, "failed_deployment_id", None)))
        if failed is not None:
            state = replace(state, label=f"{state.label} ({describe(*failed)})")
        return classify_failure(exc, state)

    @staticmethod
    def _no_deployment(exc: BaseException, state: StreamState) -> Error:
        cooldown = getattr(exc, "cooldown_time", None)
        wait = float(cooldown) if isinstance(cooldown, int | float) else None
        why = (
            f"every deployment of {state.label} is cooling down after rate limits or failures"
            if getattr(exc, "all_deployments_in_cooldown", True)
            else f"no deployment of {state.label} has capacity left under its rpm/tpm"
        )
        when = f"; try again in {wait:g}s" if wait is not None else "; try again later"
        return Error(
            f"429 {why}{when}",
            kind="rate_limit",
            status=429,
            before_first_byte=not state.streamed,
            retry_after=wait,
        )
