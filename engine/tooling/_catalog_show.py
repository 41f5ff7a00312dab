"""`visiongate catalog show`: what the catalog in use knows about a provider or a model, and
where that catalog comes from (the bundled snapshot or the refreshed copy, with its date)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from visiongate.kernel._suggest import did_you_mean

from ..facts._catalog import ModelCatalog
from ..facts._catalog_store import refreshed_path
from ..facts._keys import model_id, provider_key

__all__ = ["missing_line", "render_show", "show_document"]


def _origin(catalog: ModelCatalog, cache: Path | None) -> dict[str, Any]:
    refreshed = refreshed_path(cache)
    return {
        "in_use": catalog.label,
        "origin": catalog.origin,
        "date": catalog.date,
        "bundled": ModelCatalog.bundled().label,
        "refreshed_file": str(refreshed) if refreshed.exists() else None,
    }


def show_document(
    catalog: ModelCatalog, provider: str, model: str | None = None, cache: Path | None = None
) -> dict[str, Any]:
    """A provider's section (or one model's answer) as data (what `--json` prints)."""
    document: dict[str, Any] = {
        "catalog": _origin(catalog, cache),
        "provider": provider_key(provider),
    }
    if model is not None:
        answer = catalog.lookup(provider, model)
        document["model"] = {
            "id": model_id(model),
            "verdict": answer.verdict,
            "matched": answer.matched,
            "how": answer.how,
            "input": list(answer.inputs),
        }
        return document
    models = catalog.section(provider)
    document["models"] = [{"id": name, "input": list(inputs)} for name, inputs in models]
    document["known"] = bool(models)
    if not models:
        document["hint"] = _section_hint(provider_key(provider), sorted(catalog.providers))
    return document


def missing_line(catalog: ModelCatalog, document: dict[str, Any]) -> str:
    """One line for a look-up that found nothing: the section or the model, with the near
    name the catalog has (`did you mean `claude-sonnet-4-5`?`) or what it looked at."""
    from visiongate.kernel._display import visible

    provider = document["provider"]
    if "model" not in document:
        return visible(f"no section `{provider}` in {catalog.label}; {document['hint']}")
    found = document["model"]
    near = catalog.near(provider, found["id"])
    hint = f"did you mean `{near}`?" if near is not None else found["how"]
    return visible(f"`{provider}/{found['id']}` is not in {catalog.label}: {hint}")


def _section_hint(provider: str, sections: list[str]) -> str:
    """A near name when there is one; never a wall of every section (models.dev has 150)."""
    hint = did_you_mean(provider, sections)
    if hint.startswith("did you mean") or len(sections) <= 12:
        return hint
    return (
        f"none of its {len(sections)} sections is close; sections are models.dev provider ids "
        "such as `anthropic`, `openai`, `google`, `openrouter`"
    )


def render_show(document: dict[str, Any]) -> str:
    """The document as text for a terminal."""
    origin = document["catalog"]
    lines = [f"catalog in use: {origin['in_use']} ({origin['origin']})"]
    if origin["origin"] != "bundled":
        lines.append(f"  bundled snapshot: {origin['bundled']}")
    if origin["refreshed_file"]:
        lines.append(f"  refreshed copy: {origin['refreshed_file']}")
    if "model" in document:
        found = document["model"]
        where = f" as {found['matched']}" if found["matched"] else ""
        inputs = f" input=[{', '.join(found['input'])}]" if found["input"] else ""
        lines.append(
            f"{document['provider']} / {found['id']}: {found['verdict']}{where}{inputs} "
            f"({found['how']})"
        )
        return _shown(lines)
    if not document["known"]:
        lines.append(f"no section `{document['provider']}` in the catalog; {document['hint']}")
        return _shown(lines)
    vision = sum(1 for item in document["models"] if "image" in item["input"])
    lines.append(
        f"{document['provider']}: {len(document['models'])} model(s), {vision} with image input"
    )
    width = max(len(item["id"]) for item in document["models"])
    for item in document["models"]:
        mark = "vision   " if "image" in item["input"] else "no_vision"
        lines.append(f"  {item['id']:<{width}}  {mark}  input=[{', '.join(item['input'])}]")
    return _shown(lines)


def _shown(lines: list[str]) -> str:
    """The lines as a terminal may show them: ids, inputs and hints come from a catalog a
    mirror served, so control and invisible characters are escaped (`visible`)."""
    from visiongate.kernel._display import visible

    return "\n".join(visible(line) for line in lines)
