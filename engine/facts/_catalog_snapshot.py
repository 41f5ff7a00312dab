"""The bundled catalog snapshot's text: an api.json document reduced to what the gate reads,
sorted, one model a line (`visiongate catalog update` writes it, `_catalog_store`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def snapshot_text(document: Mapping[str, Any]) -> str:
    """The bundled snapshot's text for an api.json document: reduced, sorted, one model a line.

    `policies/catalog/models-dev.json` is exactly this for the models.dev file it names in
    `_source`, so a refresh is a small, reviewable diff.
    """
    reduced = snapshot_document(document)
    lines = ["{"]
    # `_source` and other notes first, then providers in order.
    order = sorted(reduced, key=lambda name: (not name.startswith("_"), name))
    for position, provider in enumerate(order):
        comma = "," if position < len(reduced) - 1 else ""
        section = reduced[provider]
        if provider.startswith("_"):
            lines.append(f"{_json(provider)}: {_json(section)}{comma}")
            continue
        head = {key: value for key, value in section.items() if key != "models"}
        lines.append(f'{_json(provider)}: {_json(head)[:-1]}, "models": {{')
        models = sorted(section["models"])
        lines += [
            f"  {_json(model)}: {_json(section['models'][model])}"
            + ("," if index < len(models) - 1 else "")
            for index, model in enumerate(models)
        ]
        lines.append(f"}}}}{comma}")
    return "\n".join([*lines, "}"]) + "\n"


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def snapshot_document(document: Mapping[str, Any]) -> dict[str, Any]:
    """Reduce an api.json document to what the gate reads (ids, names, modalities)."""
    reduced: dict[str, Any] = {}
    for provider, section in document.items():
        if provider.startswith("_"):
            reduced[provider] = section
            continue
        reduced[provider] = {
            "id": section.get("id", provider),
            "name": section.get("name", provider),
            "models": {
                model: {
                    "id": data.get("id", model),
                    "name": data.get("name", model),
                    "modalities": data["modalities"],
                }
                for model, data in section["models"].items()
            },
        }
    return reduced
