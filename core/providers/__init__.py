"""Model providers behind one streaming interface, and the registry that picks one by model id.

Importing this package is cheap: ``openai``, ``anthropic`` (~2.5 s) and ``litellm`` (~5–7 s) are
imported only when a model of theirs is first used.

Model ids: ``openai:<model>``, ``anthropic:<model>``, ``litellm:<litellm model string>``,
``demo:<generic|retrieval|oracle|flaky|slow>``, ``replay:<model id or request hash>``,
``imported:<model>`` (answers stored by ``import-results``, never called),
``<endpoint>:<model>`` for each OpenAI-compatible server named in ``Settings.endpoints``, and
``router:<name>`` for each litellm Router (several deployments of one model) in ``Settings.routers``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from core.providers.base import Capabilities, ModelParams, ModelSpec, Provider
from core.providers.events import Delta, Done, Error, StreamEvent, Usage
from core.registry import Entry, Registry

if TYPE_CHECKING:
    from core.ports import ResponseCache
    from core.settings import Settings

__all__ = [
    "BUILTIN",
    "PROVIDERS",
    "Capabilities",
    "Delta",
    "Done",
    "Error",
    "ModelChoice",
    "ModelParams",
    "ModelSpec",
    "Provider",
    "StreamEvent",
    "Usage",
    "UnknownProvider",
    "available_models",
    "check_model_name",
    "get_provider",
]

#: One line per provider: model-id prefix, class, description. A registered class builds itself
#: with ``from_settings(settings, response_cache)``.
PROVIDERS: Registry[Entry] = Registry(
    [
        Entry("openai", "core.providers.openai_chat:OpenAIChatProvider", "OpenAI Chat Completions (openai SDK)"),
        Entry("anthropic", "core.providers.anthropic_messages:AnthropicProvider", "Anthropic Messages (anthropic SDK)"),
        Entry("litellm", "core.providers.litellm_provider:LiteLLMProvider", "anything litellm routes"),
        Entry("demo", "core.providers.demo:DemoProvider", "offline scripted models, always available"),
        Entry("replay", "core.providers.replay:ReplayProvider", "recorded responses, replayed with their pacing"),
        Entry("imported", "core.providers.imported:ImportedProvider", "import-results answers (never called)"),
        Entry("router", "core.providers.router_provider:RouterProvider", "a configured litellm Router's deployments"),
    ]
)
BUILTIN = tuple(PROVIDERS)
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class UnknownProvider(ValueError):
    pass


class ModelChoice(NamedTuple):
    id: str
    label: str
    is_demo: bool
    #: Why it is offered (which key or endpoint makes it usable).
    reason: str


def get_provider(
    spec_or_id: ModelSpec | str, settings: Settings | None = None, *, response_cache: ResponseCache | None = None
) -> Provider:
    """The provider for a model id. Raises :class:`UnknownProvider` for an unknown prefix."""
    spec = spec_or_id if isinstance(spec_or_id, ModelSpec) else ModelSpec(id=spec_or_id)
    name = spec.provider
    entry = PROVIDERS.get(name)
    if entry is not None:
        return entry.load().from_settings(settings, response_cache)
    endpoints = settings.endpoints if settings else {}
    if name in endpoints:
        from core.providers.openai_chat import OpenAIChatProvider

        ep = endpoints[name]
        return OpenAIChatProvider(name=name, base_url=ep.base_url, api_key_env=ep.api_key_env)
    raise UnknownProvider(_unknown_provider(name, spec.id, endpoints))


def _unknown_provider(name: str, model_id: str, endpoints: dict) -> str:
    import difflib

    known = list(BUILTIN) + sorted(endpoints)
    close = difflib.get_close_matches(name, known, n=1)
    guess = f" (did you mean {close[0]}:…?)" if close else ""
    return (
        f"unknown provider {name!r} in model id {model_id!r}{guess}; known: {', '.join(known)}. "
        "To use <name>:<model> with an OpenAI-compatible server, add [endpoints.<name>] with its base_url to the config"
    )


def check_model_name(name: str, settings: Settings | None = None) -> str | None:
    """Why ``name`` cannot be used as a model id, or None when it can (the CLI and the TUI model
    picker ask before a run; nothing is imported or called). Whether the key is set is the
    provider's own check when it streams."""
    from core.providers.demo import MODELS

    provider, _, model = name.strip().partition(":")
    if not provider or not model.strip():
        return f"{name!r} is not a model id: expected provider:model, e.g. demo:oracle or openai:gpt-4o-mini"
    endpoints = settings.endpoints if settings else {}
    if provider not in PROVIDERS and provider not in endpoints:
        return _unknown_provider(provider, name, endpoints)
    if provider == "demo" and model not in MODELS:
        return f"unknown demo model {name!r}; available: " + ", ".join(f"demo:{m}" for m in MODELS)
    routers = settings.routers if settings else {}
    if provider == "router" and model.strip() not in routers:
        from core.providers.router_provider import not_configured

        return not_configured(model.strip(), routers)
    return None


def available_models(settings: Settings | None = None) -> list[ModelChoice]:
    """Demo models always; real ones only when a key env var or an endpoint makes them usable;
    every configured router (``router:<name>``).

    Models of an endpoint (``<endpoint>:<model>``) and litellm models are listed when they appear in
    ``settings.models``: a server's model names cannot be known without asking it.
    """
    from core.providers import pricing
    from core.providers.demo import MODELS

    out: list[ModelChoice] = [
        ModelChoice(f"demo:{m}", f"demo:{m} — {desc} [demo]", True, "offline scripted model, always available")
        for m, desc in MODELS.items()
    ]
    for provider, env in KEY_ENV.items():
        if os.environ.get(env):
            for model in pricing.table().get(provider, {}):
                out.append(ModelChoice(f"{provider}:{model}", f"{provider}:{model}", False, f"${env} is set"))
    configured = list(settings.models) if settings else []
    endpoints = settings.endpoints if settings else {}
    seen = {c.id for c in out}
    for model_id in configured:
        if model_id in seen or ":" not in model_id:
            continue
        provider = model_id.split(":", 1)[0]
        reason = None
        if provider in endpoints:
            reason = f"endpoint {provider!r} at {endpoints[provider].base_url}"
        elif provider == "litellm":
            reason = "configured; litellm reads the route's key from its usual env var"
        elif provider in KEY_ENV and os.environ.get(KEY_ENV[provider]):
            reason = f"${KEY_ENV[provider]} is set"
        if reason:
            out.append(ModelChoice(model_id, model_id, False, reason))
            seen.add(model_id)
    for name, router in (settings.routers if settings else {}).items():
        models = sorted({d.model for d in router.deployments})
        reason = f"router of {len(router.deployments)} deployment(s) of {', '.join(models)}"
        if f"router:{name}" not in seen:
            out.append(ModelChoice(f"router:{name}", f"router:{name}", False, reason))
    return out
