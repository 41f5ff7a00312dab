"""`visiongate registry show`: a provider's verdicts with their evidence, or one model's route.

Without a model: the registry entry (api, verdict, evidence and what it cites, model rules,
floating aliases, routing variants, base URL routes, the vetoes that can apply). With a
model: the route the gate resolves for it, through the same resolver as `decide` (agent
config, catalog and learned routes included), and where that answer came from.
"""

from __future__ import annotations

from typing import Any

from ..facts._pairs import ResolvedFacts
from ..facts._resolver import FactResolver
from ..facts.registry._registry import ProviderRegistry, path_of
from ..facts.registry._schema import EVIDENCE_MEANS
from ..facts.registry._types import Entry, Evidence, MessageRule, Veto

__all__ = ["entry_document", "render_entry", "render_route", "route_document"]


def _verdict(accepts: bool, evidence: Evidence) -> dict[str, Any]:
    return {
        "verdict": "accepts" if accepts else "refuses",
        "evidence": evidence.kind,
        "path": path_of(accepts, evidence.kind),
        "cites": evidence.cites,
        "where": evidence.where,
    }


def _message_rules(registry: ProviderRegistry, entry: Entry) -> list[MessageRule]:
    names = (entry.id, *entry.aliases)
    return [rule for rule in registry.message_rules if any(rule.provider.matches(n) for n in names)]


def _vetoes(registry: ProviderRegistry, entry: Entry) -> list[Veto]:
    names = (entry.id, *entry.aliases)
    return [veto for veto in registry.vetoes if any(veto.provider.matches(n) for n in names)]


def entry_document(registry: ProviderRegistry, entry: Entry) -> dict[str, Any]:
    """A registry entry as data (what `--json` prints)."""
    return {
        "provider": entry.id,
        "aliases": list(entry.aliases),
        "api": entry.api,
        "catalog": entry.catalog,
        "note": entry.note,
        **_verdict(entry.tool_result_images, entry.evidence),
        "rules": [
            {
                "match": list(rule.match.text),
                "when_catalog": sorted(rule.when_catalog) if rule.when_catalog else None,
                "api": rule.api or entry.api,
                "note": rule.note,
                **_verdict(rule.tool_result_images, rule.evidence),
            }
            for rule in entry.rules
        ],
        "model_aliases": [
            {"alias": a.alias, "model": a.model, "note": a.note, **_verdict(True, a.evidence)}
            for a in entry.model_aliases
        ],
        "strip_variants": list(entry.strip_variants),
        "base_url_routes": [{"suffix": s, "provider": p} for s, p in entry.base_url_routes],
        "vetoes": [
            {"model": list(veto.model.text), "note": veto.note, **_verdict(False, veto.evidence)}
            for veto in _vetoes(registry, entry)
        ],
        "message_rules": [
            {
                "model": list(rule.model.text),
                "user_after_tool": rule.user_after_tool,
                "note": rule.note,
                "evidence": rule.evidence.kind,
                "cites": rule.evidence.cites,
                "where": rule.evidence.where,
            }
            for rule in _message_rules(registry, entry)
        ],
    }


def _evidence_lines(item: dict[str, Any], indent: str) -> list[str]:
    means = EVIDENCE_MEANS.get(item["evidence"], "")
    lines = [
        f"{indent}{item['verdict']}, on {item['evidence']} evidence ({means}): "
        f"path `{item['path']}` ({item['where']})"
    ]
    if item["cites"]:
        lines.append(f"{indent}  cites: {item['cites']}")
    return lines


def render_entry(document: dict[str, Any]) -> str:
    """The entry document as text for a terminal."""
    aliases = f" (aliases: {', '.join(document['aliases'])})" if document["aliases"] else ""
    lines = [
        f"provider: {document['provider']}{aliases}",
        f"api:      {document['api']}    catalog section: {document['catalog']}",
        "verdict:",
        *_evidence_lines(document, "  "),
        f"  note: {document['note']}",
    ]
    if document["strip_variants"]:
        variants = ", ".join(f"`:{v}`" for v in document["strip_variants"])
        lines.append(f"routing variants stripped before matching: {variants}")
    for route in document["base_url_routes"]:
        lines.append(f"a base URL ending with `{route['suffix']}` is `{route['provider']}`")
    for alias in document["model_aliases"]:
        lines.append(f"alias `{alias['alias']}` -> `{alias['model']}`: {alias['note']}")
        lines += _evidence_lines(alias, "  ")
    if document["rules"]:
        lines.append("model rules (the first that matches decides):")
    for number, rule in enumerate(document["rules"], start=1):
        when = f", when the catalog says {'|'.join(rule['when_catalog'])}"
        when = when if rule["when_catalog"] else ""
        lines.append(f"  {number}. {', '.join(rule['match'])}{when} (api {rule['api']})")
        lines += _evidence_lines(rule, "     ")
        lines.append(f"     note: {rule['note']}")
    for veto in document["vetoes"]:
        lines.append(f"veto: {', '.join(veto['model'])}: {veto['note']}")
        lines += _evidence_lines(veto, "  ")
    for rule in document.get("message_rules", []):
        lines.append(
            f"message order ({', '.join(rule['model'])}): user after tool: "
            f"{rule['user_after_tool']}: {rule['note']}"
        )
        lines.append(f"  on {rule['evidence']} evidence ({rule['where']}); cites: {rule['cites']}")
    return "\n".join(lines)


def route_document(resolver: FactResolver, resolved: ResolvedFacts) -> dict[str, Any]:
    """One model's route as the gate resolves it (what `--json` prints with a model)."""
    route = resolved.route
    return {
        "provider": route.provider,
        "model": route.model,
        "path": route.path,
        "verdict": "accepts" if route.accepts_tool_images else "refuses",
        "evidence": route.evidence,
        "reason": route.reason,
        "source": route.source,
        "where": route.where,
        "cites": route.cites,
        "api": route.api,
        "formats": list(route.formats),
        "max_image_base64": route.max_image_base64,
        "max_edge_px": route.max_edge_px,
        "max_images_per_request": route.max_images_per_request,
        "catalog": resolved.facts["catalog"],
        "catalog_provenance": resolved.provenance["catalog"],
        "user_after_tool": route.user_after_tool,
        "message_rule": route.message_rule,
        "notes": list(resolver.locate(resolved.provider, resolved.model).notes),
    }


def render_route(document: dict[str, Any]) -> str:
    """The route document as text for a terminal."""
    source = document["where"] or document["source"]
    lines = [
        f"route:    {document['provider']} / {document['model']}",
        f"path:     {document['path']} (verdict {document['verdict']}, "
        f"evidence {document['evidence']})",
        f"reason:   {document['reason']}",
        f"source:   {source}",
    ]
    if document["cites"]:
        lines.append(f"cites:    {document['cites']}")
    means = EVIDENCE_MEANS.get(document["evidence"], "")
    if means:
        lines.append(f"evidence: {document['evidence']}: {means}")
    if document.get("message_rule"):
        lines.append(
            f"order:    user after tool: {document['user_after_tool']}: {document['message_rule']}"
        )
    lines += [f"model:    {note}" for note in document["notes"]]
    lines += [
        f"catalog:  {document['catalog']} ({document['catalog_provenance']})",
        f"payload:  api {document['api']}, formats {', '.join(document['formats'])}, "
        f"{document['max_image_base64']} base64 bytes and {document['max_edge_px']} px per "
        f"image, {_images(document['max_images_per_request'])} per request",
    ]
    return "\n".join(lines)


def _images(count: int) -> str:
    return "1 image" if count == 1 else f"{count} images"
