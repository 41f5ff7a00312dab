"""Try a route: what `decide --explain` and `route` print for a provider and model, for the
policy and the agent config in the editor.

The four facts are resolved as `decide` resolves them (the catalog in use, the newest of the
bundled snapshot and a refreshed copy; the bundled provider registry; this machine's learned
routes), so a misspelt provider or model gets the same did-you-mean in the decision's
warnings. The payload is what `route --source mcp` builds for a small real image (made with
Pillow, kept in the image cache `route` uses), with the image data shortened for reading.
"""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from visiongate.engine._diagnostics import PolicyError
from visiongate.engine._gate import Gate
from visiongate.engine._load import CompiledPolicy
from visiongate.engine.facts._catalog import ModelCatalog
from visiongate.engine.facts._catalog_store import current_catalog
from visiongate.engine.facts.config._config import AgentConfig
from visiongate.engine.facts.registry._registry import ProviderRegistry
from visiongate.engine.tooling._explain import cell_explanation

_SHOWN_DATA = 48
"""Characters of base64 image data the page shows (the rest is counted)."""
_FIELD_LIMIT = 200


@dataclass
class RouteTrier:
    """The catalog and registry, read once; a gate per request (the texts change)."""

    catalog: ModelCatalog | None = None
    registry: ProviderRegistry | None = None

    def gate(self, compiled: CompiledPolicy, config_text: str, config_file: str) -> Gate:
        """A gate over the edited policy and config; raises `PolicyError` for a bad config."""
        if self.catalog is None:
            self.catalog, self.registry = current_catalog(), ProviderRegistry.bundled()
        agent = AgentConfig.from_text(config_text, config_file)
        gate = Gate.load(None, agent, self.catalog, self.registry)
        gate.install(compiled)
        return gate

    def route(self, compiled: CompiledPolicy, request: Mapping[str, Any]) -> dict[str, Any]:
        provider = str(request.get("provider") or "").strip()[:_FIELD_LIMIT]
        model = str(request.get("model") or "").strip()[:_FIELD_LIMIT]
        if not provider or not model:
            return {"error": "give a provider and a model"}
        try:
            config_file = str(request.get("config_file") or "config.yaml")
            gate = self.gate(compiled, str(request.get("config") or ""), config_file)
        except PolicyError as error:
            return {"error": f"the agent config does not load: {error}"}
        decision = gate.decide(provider, model, trace=False)
        record = decision.record()
        record["explanation"] = cell_explanation(gate.compiled, decision.cell)
        return {
            "decision": record,
            "catalog": self.catalog.label if self.catalog is not None else "",
            "config_errors": [d.render() for d in gate.resolver.config.errors],
            "payload": self._payload(gate, provider, model),
        }

    def _payload(self, gate: Gate, provider: str, model: str) -> dict[str, Any]:
        from visiongate.adapters._router import Router

        router = Router(gate)  # the image cache `route` uses, so the `MEDIA:` path is real
        result = {
            "content": [
                {"type": "text", "text": "screenshot taken"},
                {"type": "image", "data": _sample_image(), "mimeType": "image/png"},
            ]
        }
        routed = asyncio.run(
            router.mcp(result, tool_name="screenshot", provider=provider, model=model)
        )
        payload = router.payload(routed, None, tool_call_id="call_0")
        return {"summary": payload.summary(), "body": shortened(payload.as_json())}


def _sample_image() -> str:
    """A small real PNG, as an MCP server would send it (base64)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (40, 90, 160)).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def shortened(value: Any) -> Any:
    """The payload with long base64 strings cut, so that its shape reads at a glance."""
    if isinstance(value, Mapping):
        return {key: shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shortened(item) for item in value]
    if (
        isinstance(value, str)
        and len(value) > 2 * _SHOWN_DATA
        and not any(c.isspace() for c in value)
    ):
        return f"{value[:_SHOWN_DATA]}… ({len(value)} characters)"
    return value
