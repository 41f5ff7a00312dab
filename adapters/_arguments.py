"""The public API's arguments, checked once, at the edge (`Router`), in one message style.

A typo or a wrong type is an `ArgumentError` (a `ValueError`) naming the argument, what it got
and what it takes, before any decision is made: never a `KeyError` from deep in the payload
guard, an `AttributeError` about `NoneType`, or a typo accepted in silence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from visiongate.engine import SOURCES
from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._suggest import did_you_mean

from .payloads import API_NAMES

__all__ = ["ArgumentError", "check_api", "check_image", "check_route", "check_seen_hashes"]

_SHOWN: Final = 60


class ArgumentError(VisiongateError, ValueError):
    """An argument of the public API that cannot be used."""


def _shown(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _choice(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ArgumentError(f"unknown {name} `{_shown(value)}`: {did_you_mean(value, choices)}")


def _text(name: str, value: object, example: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(
            f"`{name}` must be a non-empty string such as `{example}`, not {value!r}"
        )


def check_api(api: object) -> None:
    """`api`: None (the route's own shape) or one of `API_NAMES`."""
    if api is not None:
        _choice("api", api, API_NAMES)


def check_route(
    source: object,
    provider: object,
    model: object,
    api: object,
    sources: Sequence[str] = SOURCES,
    kind: str = "source",
) -> None:
    """What every routing call takes: a source, the main model's provider and model, an api."""
    _choice(kind, source, sources)
    _text("provider", provider, "anthropic")
    _text("model", model, "claude-sonnet-4-5")
    check_api(api)


def check_image(image: object) -> None:
    if not isinstance(image, bytes | bytearray | memoryview):
        raise ArgumentError(f"`image` must be the image's bytes, not {type(image).__name__}")


def check_seen_hashes(seen_hashes: Iterable[str]) -> frozenset[str]:
    """The hashes as a set; one string given alone would be read as its characters."""
    if isinstance(seen_hashes, str | bytes):
        raise ArgumentError(
            "`seen_hashes` must be a collection of SHA-256 hex strings, not one string"
        )
    hashes = frozenset(seen_hashes)
    bad = next((h for h in hashes if not isinstance(h, str)), None)
    if bad is not None:
        raise ArgumentError(f"`seen_hashes` holds {_shown(bad)}, not a SHA-256 hex string")
    return hashes


def check_positive(name: str, value: object) -> None:
    """None, or a whole number above 0 (`image_budget`, `max_edge_px`)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ArgumentError(f"`{name}` must be a whole number above 0, not {_shown(value)}")
