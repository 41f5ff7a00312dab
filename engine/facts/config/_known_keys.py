"""The agent config keys visiongate reads, and did-you-mean warnings for near misses.

An agent config holds far more than visiongate reads (Hermes Agent keeps its whole setup
there), so an unknown key is only reported when it is a near miss of a key visiongate reads
in the same section (`auxiliary.vison`, `vision.embed_taget_bytes`): such a typo would
otherwise be ignored in silence and the safe default would apply without a word. The
`visiongate` section is visiongate's own, so every unknown key there is reported.

A near miss of a key that routes images (`agnet`, `agent.image_input_mod`,
`auxiliary.vision.provder`, `model.supports_vison`, `model_overides`) is an error,
`misspelt-routing-key`, and the config fails closed: ignoring it would open the native lane
the operator meant to close. A near miss of a key that only tunes (`vision.embed_taget_bytes`,
`auxiliary.vision.timout`) stays a warning. Keys the production agent reads and visiongate
does not (`vision.max_calls_per_image`) are named once as ignored (`IGNORED`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from visiongate.kernel._suggest import closest, did_you_mean

from ..._yaml import DocumentPath

__all__ = [
    "IGNORED",
    "MISSPELT_ROUTING_KEY",
    "SECTIONS",
    "byte_count",
    "clean",
    "coerce_bool",
    "unknown_keys",
]

ANY: Final = "*"
"""Stands for any provider id or model id in a section path."""

SECTIONS: Final[Mapping[tuple[str, ...], tuple[tuple[str, ...], bool]]] = {
    (): (
        (
            "agent",
            "auxiliary",
            "model",
            "providers",
            "custom_providers",
            "model_overrides",
            "vision",
            "visiongate",
        ),
        False,
    ),
    ("agent",): (("image_input_mode",), False),
    ("auxiliary",): (("vision",), False),
    ("auxiliary", "vision"): (
        (
            "provider",
            "model",
            "base_url",
            "api_key_env",
            "api_key",
            "timeout",
            "max_retries",
            "extra_body",
        ),
        False,
    ),
    ("model",): (("default", "name", "provider", "base_url", "supports_vision"), False),
    ("providers", ANY): (
        ("tool_result_images", "api", "models", "base_url", "catalog_provider"),
        False,
    ),
    ("providers", ANY, "models", ANY): (("supports_vision", "vision"), False),
    ("custom_providers", ANY): (
        ("name", "base_url", "models", "model", "tool_result_images", "api", "catalog_provider"),
        False,
    ),
    ("custom_providers", ANY, "models", ANY): (("supports_vision", "vision"), False),
    ("model_overrides", ANY): (("supports_vision", "vision"), False),
    ("model_overrides", ANY, ANY): (("supports_vision", "vision"), False),
    ("vision",): (("embed_target_bytes", "max_calls_per_image"), False),
    ("models_dev",): (("url",), False),
    ("visiongate",): (("routes_file", "catalog_refresh"), True),
}
"""Section path -> (keys visiongate reads there, whether the section is visiongate's own)."""

TUNING: Final[frozenset[tuple[str, ...]]] = frozenset(
    {
        ("vision",),
        ("vision", "embed_target_bytes"),
        ("vision", "max_calls_per_image"),
        ("models_dev",),
        ("models_dev", "url"),
        ("visiongate",),
        *(
            ("auxiliary", "vision", key)
            for key in ("api_key_env", "api_key", "timeout", "max_retries", "extra_body")
        ),
    }
)
"""Key paths that tune but do not route: a near miss of one of these is only a warning. Every
other key visiongate reads decides a lane (outside its own section, a warning as well)."""

IGNORED: Final[Mapping[tuple[str, ...], str]] = {
    ("vision", "max_calls_per_image"): (
        "visiongate fits at most 4 images per result; it does not count calls per image"
    ),
}
"""Keys the production agent reads that visiongate does not, with why: named once as ignored."""

MISSPELT_ROUTING_KEY: Final = "misspelt-routing-key"

NEAR_MISS: Final = 0.75
"""How close (difflib ratio) an unknown key must be to a known one to be called a typo."""

Warn = Callable[[str, str, DocumentPath, str], object]
"""(code, message, path, help) -> anything: how a finding is reported."""

_BOOLEAN_WORDS: Final[Mapping[str, bool]] = {
    **dict.fromkeys(("true", "yes", "on", "1"), True),
    **dict.fromkeys(("false", "no", "off", "0"), False),
}


def unknown_keys(data: Mapping[Any, Any], warn: Warn, only: tuple[str, ...] | None = None) -> None:
    """Report near misses (and, in visiongate's own section, every unknown key) via `warn`.

    `only` restricts the walk to sections under that prefix (e.g. one provider's entry)."""
    for path, section in _sections(data, ()):
        if only is not None and tuple(str(part) for part in path[: len(only)]) != only:
            continue
        if only is None and path[:1] in (("providers",), ("custom_providers",)) and len(path) > 1:
            continue  # reported with the provider's declaration, where its warnings live
        if _override_group(path, section):
            continue  # `model_overrides.<provider>`: its keys are model ids, not settings
        known, own = _known(path)
        for key in section:
            if str(key) in known:
                continue
            close = closest(str(key), known, NEAR_MISS)
            # In visiongate's own section every key is reported, with a looser suggestion.
            if own or close is not None:
                _report(warn, path, str(key), known, None if own else close)


def _override_group(path: DocumentPath, section: Mapping[Any, Any]) -> bool:
    """Whether `section` is a `model_overrides.<provider>` group of per-model entries (the
    production agent's nested form) rather than one model's entry."""
    return (
        len(path) == 2
        and path[0] == "model_overrides"
        and not {"supports_vision", "vision"} & {str(key) for key in section}
        and all(isinstance(value, Mapping) for value in section.values())
    )


def _report(
    warn: Warn, path: DocumentPath, key: str, known: tuple[str, ...], meant: str | None
) -> None:
    dotted = ".".join(str(part) for part in path)
    where = f"under `{dotted}`" if dotted else "at the top level"
    routes = meant is not None and _routes((*(str(part) for part in path), meant))
    if routes:
        message = (
            f"unknown key `{key}` {where} looks like `{meant}`, which routes images: "
            "failing closed to `text`"
        )
    else:
        message = f"unknown key `{key}` {where} is ignored"
    warn(
        "misspelt-routing-key" if routes else "unknown-config-key",
        message,
        (*path, key),
        # A near miss at `NEAR_MISS` is also the closest match at `did_you_mean`'s looser cutoff.
        did_you_mean(key, known),
    )


def _routes(path: tuple[str, ...]) -> bool:
    """Whether the key at `path` (provider ids and list indexes as given) decides a lane."""
    return path not in TUNING


def _known(path: DocumentPath) -> tuple[tuple[str, ...], bool]:
    for pattern, entry in SECTIONS.items():
        if len(pattern) == len(path) and all(
            p in (ANY, str(v)) for p, v in zip(pattern, path, strict=True)
        ):
            return entry
    return (), False


def _sections(
    data: Mapping[Any, Any], path: DocumentPath
) -> Iterator[tuple[DocumentPath, Mapping[Any, Any]]]:
    """Every section visiongate reads that is present and a mapping, with its path (a list,
    such as `custom_providers`, is walked item by item)."""
    if _known(path)[0]:
        yield path, data
    for key, child in data.items():
        yield from _children((*path, str(key)), child)


def _children(path: DocumentPath, child: Any) -> Iterator[tuple[DocumentPath, Mapping[Any, Any]]]:
    if isinstance(child, Mapping) and _walkable(path):
        yield from _sections(child, path)
    elif isinstance(child, list) and _walkable((*path, 0)):
        for index, item in enumerate(child):
            yield from _children((*path, index), item)


def _walkable(path: DocumentPath) -> bool:
    """Whether a section visiongate reads lies at or under `path`."""
    return any(
        len(pattern) >= len(path)
        and all(p in (ANY, str(v)) for p, v in zip(pattern[: len(path)], path, strict=True))
        for pattern in SECTIONS
    )


def coerce_bool(raw: Any) -> bool | None:
    """A bool, 0/1, or a word true/yes/on/1 / false/no/off/0; None for anything else.

    Strict on purpose: `bool("false")` is True, so a loose reading of a quoted `"false"`
    would open the native lane for a model that cannot see.
    """
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int):
        return bool(raw) if raw in (0, 1) else None
    return _BOOLEAN_WORDS.get(raw.strip().lower()) if isinstance(raw, str) else None


def clean(raw: Any) -> str:
    """A config scalar as stripped text; None, false and empty values are blank."""
    return str(raw or "").strip()


def byte_count(raw: Any) -> int | None:
    """A whole number of bytes from an int, an integral float or a numeric string."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if raw.is_integer() else None
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:
            return None
    return None
