"""`visiongate probe`: settle a route by experiment.

One real tool call whose tool result carries an image of a random code, sent in the route's
API shape exactly as the router would send it; the model is asked to read the code back.
`accepts` (it did), `refuses` (an error that rejects the image), `inconclusive` (anything
else). `plan_probe` works out the endpoint and key from a gate's route; `probe_route` runs it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from visiongate.engine import Gate

from ._run import ProbeResult, ProbeTarget, probe_route, safe_origin
from ._shapes import PROBE_APIS, shape_for

__all__ = [
    "DEFAULT_ENDPOINTS",
    "PROBE_APIS",
    "ProbeResult",
    "ProbeTarget",
    "plan_probe",
    "probe_route",
    "safe_origin",
]


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    key_env: str


DEFAULT_ENDPOINTS: Final[Mapping[tuple[str, str], Endpoint]] = {
    ("anthropic", "anthropic"): Endpoint("https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    ("openai", "openai-responses"): Endpoint("https://api.openai.com/v1", "OPENAI_API_KEY"),
    ("openai", "openai-chat"): Endpoint("https://api.openai.com/v1", "OPENAI_API_KEY"),
    ("openai-chat", "openai-chat"): Endpoint("https://api.openai.com/v1", "OPENAI_API_KEY"),
    ("openrouter", "openai-chat"): Endpoint("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    ("openrouter", "openai-responses"): Endpoint(
        "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"
    ),
    ("gemini", "gemini"): Endpoint(
        "https://generativelanguage.googleapis.com/v1beta", "GEMINI_API_KEY"
    ),
    ("xai", "openai-responses"): Endpoint("https://api.x.ai/v1", "XAI_API_KEY"),
    ("groq", "openai-chat"): Endpoint("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    ("mistral", "openai-chat"): Endpoint("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    ("deepseek", "openai-chat"): Endpoint("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
}
"""(registry provider id, api) -> the public endpoint and the usual key variable."""


def plan_probe(
    gate: Gate,
    provider: str,
    model: str,
    *,
    api: str | None = None,
    base_url: str | None = None,
    key_env: str | None = None,
    keyless: bool = False,
    timeout: float = 60.0,
) -> ProbeTarget:
    """The probe target for a provider and model, as the gate routes them.

    The key is read from `key_env`, else from the provider's usual variable; it is never
    taken from anywhere else. No key found is a `ValueError` before any request (a request
    without one can only end "inconclusive"), unless `keyless` says the endpoint takes none
    (a local server)."""
    route = gate.resolver.resolve(provider, model).route
    chosen = api or route.api
    shape_for(chosen)  # fails early for a shape the probe does not speak
    known = DEFAULT_ENDPOINTS.get((route.provider, chosen))
    url = base_url or (known.base_url if known is not None else None)
    if not url:
        raise ValueError(
            f"no known endpoint for `{route.provider}` over `{chosen}`: give `--base-url`"
        )
    key = None if keyless else _key(key_env, known, route.provider)
    return ProbeTarget(route, model.strip(), chosen, url, key, timeout)


def _key(key_env: str | None, known: Endpoint | None, provider: str) -> str:
    if key_env:
        value = os.environ.get(key_env)
        if not value:
            raise ValueError(f"environment variable `{key_env}` is not set")
        return value
    if known is None:
        raise ValueError(
            f"no API key for `{provider}`: name the variable that holds it with `--key-env`, "
            "or give `--no-key` for an endpoint that takes none"
        )
    value = os.environ.get(known.key_env)
    if not value:
        raise ValueError(
            f"no API key for `{provider}`: `{known.key_env}` is not set; export it, name "
            "another variable with `--key-env`, or give `--no-key` for an endpoint that takes none"
        )
    return value
