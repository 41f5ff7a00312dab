"""Loading the provider registry: named stages that collect diagnostics, as for policies.

load YAML -> schema -> names (ids and aliases name one provider each) -> evidence (what a
verdict rests on is cited; a base URL route names a provider) -> build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from visiongate.kernel.shapes import SHAPES

from ..._diagnostics import Diagnostic
from ..._validate import validate
from ..._yaml import DocumentPath, LoadedYaml
from ..._yaml._staged import Staged, run_stages, stage_yaml
from ._schema import (
    CITED_EVIDENCE,
    REGISTRY_SCHEMA,
    place_registry_diagnostic,
    refine_registry_diagnostic,
)
from ._types import (
    Entry,
    Evidence,
    MessageRule,
    ModelAlias,
    ModelRule,
    Patterns,
    RegistryTables,
    Veto,
    limits_with,
)

__all__ = ["STAGES", "read_registry_text"]

_LIMIT_KEYS = ("formats", "max_image_base64", "max_edge_px", "max_images_per_request")


class _Context(Staged):
    document: dict[str, Any] | None = None
    tables: RegistryTables | None = None


def _stage_schema(context: _Context) -> None:
    assert context.loaded is not None
    loaded = context.loaded
    document, found = validate(loaded, REGISTRY_SCHEMA, refine_registry_diagnostic)
    context.document = document
    context.diagnostics.extend(place_registry_diagnostic(d, loaded) for d in found)


def _stage_names(context: _Context) -> None:
    assert context.loaded is not None and context.document is not None
    context.diagnostics.extend(_name_clashes(context.document, context.loaded))


def _stage_evidence(context: _Context) -> None:
    assert context.loaded is not None and context.document is not None
    context.diagnostics.extend(_uncited(context.document, context.loaded))
    context.diagnostics.extend(_bad_base_url_routes(context.document, context.loaded))


def _stage_build(context: _Context) -> None:
    assert context.document is not None and context.loaded is not None
    context.tables = _build_tables(context.document, context.file, context.loaded)


STAGES: tuple[tuple[str, Callable[[_Context], None]], ...] = (
    ("load_yaml", stage_yaml),
    ("schema", _stage_schema),
    ("names", _stage_names),
    ("evidence", _stage_evidence),
    ("build", _stage_build),
)


def read_registry_text(
    text: str, file: str = "<registry>"
) -> tuple[RegistryTables | None, list[Diagnostic]]:
    """Run every stage that can run; never raises for bad input (`analyze_registry_text` in
    `_registry` makes the registry of what it reads)."""
    context = run_stages(_Context(text, file), STAGES)
    return context.tables, context.diagnostics


# -- semantic checks -----------------------------------------------------------------------------


def _name_clashes(document: Mapping[str, Any], loaded: LoadedYaml) -> list[Diagnostic]:
    """Every provider id and alias must name exactly one provider."""
    owners: dict[str, str] = {name: name for name in document["providers"]}
    found: list[Diagnostic] = []
    for name, entry in document["providers"].items():
        for index, alias in enumerate(entry.get("aliases", [])):
            owner = owners.setdefault(alias, name)
            if owner != name or alias == name:
                path = ("providers", name, "aliases", index)
                found.append(
                    Diagnostic(
                        "duplicate-provider-name",
                        "error",
                        f"alias `{alias}` of `{name}` already names provider `{owner}`",
                        loaded.location(path),
                        path,
                        help="every provider id and alias must name one provider",
                    )
                )
    return found


def _verdicts(document: Mapping[str, Any]) -> Iterator[tuple[DocumentPath, Mapping[str, Any]]]:
    """Every mapping that carries `evidence`, with its document path."""
    for name, entry in document["providers"].items():
        yield ("providers", name), entry
        for section in ("models", "model_aliases"):
            for index, item in enumerate(entry.get(section, [])):
                yield ("providers", name, section, index), item
    for section in ("vetoes", "message_rules"):
        for index, item in enumerate(document[section]):
            yield (section, index), item


def _uncited(document: Mapping[str, Any], loaded: LoadedYaml) -> list[Diagnostic]:
    """`documented` and `field` evidence must say where it can be read."""
    return [
        Diagnostic(
            "uncited-evidence",
            "error",
            f"`{item['evidence']}` evidence needs `cites`",
            loaded.location((*path, "evidence")),
            (*path, "evidence"),
            help="name the document, issue or agent that says so, or write `evidence: assumed`",
        )
        for path, item in _verdicts(document)
        if item["evidence"] in CITED_EVIDENCE and not item.get("cites")
    ]


def _bad_base_url_routes(document: Mapping[str, Any], loaded: LoadedYaml) -> list[Diagnostic]:
    providers = document["providers"]
    found = []
    for name, entry in providers.items():
        for index, route in enumerate(entry.get("base_url_routes", [])):
            if route["provider"] not in providers:
                path = ("providers", name, "base_url_routes", index, "provider")
                found.append(
                    Diagnostic(
                        "unknown-provider",
                        "error",
                        f"base URL route of `{name}` names unknown provider `{route['provider']}`",
                        loaded.location(path),
                        path,
                        help="name a provider id listed under `providers`",
                    )
                )
    return found


# -- building ------------------------------------------------------------------------------------


def _evidence(spec: Mapping[str, Any], path: DocumentPath, loaded: LoadedYaml) -> Evidence:
    location = loaded.location(path, key=True)
    where = f"{Path(location.file).name}:{location.line}"
    return Evidence(spec["evidence"], str(spec.get("cites", "")).strip(), where)


def _build_tables(document: Mapping[str, Any], file: str, loaded: LoadedYaml) -> RegistryTables:
    apis = {
        shape.name: limits_with(shape.limits, document["apis"].get(shape.name, {}))
        for shape in SHAPES
    }
    entries = {
        name: _build_entry(name, spec, loaded) for name, spec in document["providers"].items()
    }
    names = {name: name for name in entries}
    for name, spec in document["providers"].items():
        names.update(dict.fromkeys(spec.get("aliases", []), name))
    vetoes = tuple(
        Veto(
            Patterns.of(spec["provider"]),
            Patterns.of(spec["model"]),
            spec["note"].strip(),
            _evidence(spec, ("vetoes", index), loaded),
        )
        for index, spec in enumerate(document["vetoes"])
    )
    message_rules = tuple(
        MessageRule(
            Patterns.of(spec["provider"]),
            Patterns.of(spec["model"]),
            spec["user_after_tool"],
            spec["note"].strip(),
            _evidence(spec, ("message_rules", index), loaded),
        )
        for index, spec in enumerate(document["message_rules"])
    )
    return RegistryTables(
        file=file,
        label=Path(file).name,
        default_api=document["defaults"].get("api", "openai-chat"),
        apis=MappingProxyType(apis),
        entries=MappingProxyType(entries),
        names=MappingProxyType(names),
        vetoes=vetoes,
        message_rules=message_rules,
    )


def _build_entry(name: str, spec: Mapping[str, Any], loaded: LoadedYaml) -> Entry:
    base: DocumentPath = ("providers", name)
    rules = tuple(
        ModelRule(
            Patterns.of(rule["match"]),
            rule["tool_result_images"],
            rule.get("api"),
            rule["note"].strip(),
            _evidence(rule, (*base, "models", index), loaded),
            frozenset(rule["when_catalog"]) if "when_catalog" in rule else None,
        )
        for index, rule in enumerate(spec.get("models", []))
    )
    aliases = tuple(
        ModelAlias(
            item["alias"].strip(),
            item["model"].strip(),
            item["note"].strip(),
            _evidence(item, (*base, "model_aliases", index), loaded),
        )
        for index, item in enumerate(spec.get("model_aliases", []))
    )
    return Entry(
        id=name,
        api=spec["api"],
        tool_result_images=spec["tool_result_images"],
        catalog=spec.get("catalog", name),
        note=spec["note"].strip(),
        evidence=_evidence(spec, base, loaded),
        rules=rules,
        limits=MappingProxyType({key: spec[key] for key in _LIMIT_KEYS if key in spec}),
        aliases=tuple(spec.get("aliases", [])),
        strip_variants=tuple(variant.lower() for variant in spec.get("strip_variants", [])),
        profile_prefixes=tuple(prefix.lower() for prefix in spec.get("profile_prefixes", [])),
        model_aliases=aliases,
        base_url_routes=tuple(
            (route["suffix"], route["provider"]) for route in spec.get("base_url_routes", [])
        ),
        runtime=spec.get("runtime"),
    )
