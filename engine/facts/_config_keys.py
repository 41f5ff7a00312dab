"""The agent config keys visiongate reads, and did-you-mean warnings for near misses.

An agent config holds far more than visiongate reads (Hermes Agent keeps its whole setup
there), so an unknown key is only reported when it is a near miss of a key visiongate reads
in the same section (`auxiliary.vison`, `vision.embed_taget_bytes`): such a typo would
otherwise be ignored in silence and the safe default would apply without a word. The
`visiongate` section is visiongate's own, so every unknown key there is reported.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from visiongate.kernel._suggest import did_you_mean

from .._yaml import DocumentPath

__all__ = ["SECTIONS", "byte_count", "clean", "coerce_bool", "unknown_keys"]

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
    ("providers", ANY): (("tool_result_images", "api", "models", "base_url"), False),
    ("providers", ANY, "models", ANY): (("supports_vision", "vision"), False),
    ("custom_providers", ANY): (
        ("name", "base_url", "models", "model", "tool_result_images", "api"),
        False,
    ),
    ("custom_providers", ANY, "models", ANY): (("supports_vision", "vision"), False),
    ("model_overrides", ANY): (("supports_vision", "vision"), False),
    ("vision",): (("embed_target_bytes",), False),
    ("visiongate",): (("routes_file", "catalog_refresh"), True),
}
"""Section path -> (keys visiongate reads there, whether the section is visiongate's own)."""

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
        known, own = _known(path)
        for key in section:
            if str(key) in known:
                continue
            # In visiongate's own section every key is reported, with a looser suggestion.
            if own or difflib.get_close_matches(str(key), known, n=1, cutoff=NEAR_MISS):
                _report(warn, path, str(key), known)


def _report(warn: Warn, path: DocumentPath, key: str, known: tuple[str, ...]) -> None:
    where = ".".join(str(part) for part in path) or "the top level"
    warn(
        "unknown-config-key",
        f"unknown key `{key}` under `{where}` is ignored",
        (*path, key),
        # A near miss at `NEAR_MISS` is also the closest match at `did_you_mean`'s looser cutoff.
        did_you_mean(key, known),
    )


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
