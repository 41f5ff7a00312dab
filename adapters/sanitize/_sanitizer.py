"""Clean untrusted tool output before the model reads it, and tally what was removed.

One `Sanitizer` serves one decision: the rules it applies are compiled once per settings value
and shared, and its tally (what was stripped, per surface) goes into the decision record.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from visiongate.engine import SanitizeSettings

from ._flags import tag_sequence
from ._keys import is_reserved_meta_key

if TYPE_CHECKING:
    # The character rules (`_text`) load with the first text that is not ASCII: a proxy
    # cleans its ASCII handshake without them (issue 37).
    from ._text import Counts, TextRules

__all__ = ["Sanitizer"]

_LOG = logging.getLogger("visiongate.sanitize")
_FLAGGED = "_flagged"


class Sanitizer:
    """Cleans text, JSON-like values and `_meta` mappings; counts removals per surface.

    A surface names where text came from (`text`, `structured_content`, `meta`, ...). The tally
    is the only mutable state; `counts()` hands out a fresh copy. Inputs are never mutated, and
    whatever needs no cleaning comes back as the same object.
    """

    __slots__ = ("_clean", "_rules", "_settings", "_tally")
    _clean: Callable[[str, TextRules], tuple[str, Counts]]
    """`_text.clean_text`, set with `_rules`."""

    def __init__(self, settings: SanitizeSettings | None = None) -> None:
        self._settings = settings if settings is not None else SanitizeSettings()
        # Compiled once per settings value (cached), on the first text that is not ASCII;
        # the allowed flags are checked now all the same.
        for tag in self._settings.allowed_flag_tags:
            tag_sequence(tag)
        self._rules: TextRules | None = None
        self._tally: dict[str, dict[str, int]] = {}

    def prepare(self) -> None:
        """Compile the rules for text that is not ASCII now (once per settings value), so the
        first such text does not wait for them: a proxy does it while its server boots."""
        if self._rules is None:
            self._rules, self._clean = _text_rules(self._settings)

    @property
    def settings(self) -> SanitizeSettings:
        """The `sanitize` settings in force."""
        return self._settings

    def text(self, text: str, surface: str) -> str:
        """`text` without the invisible characters the policy's channels strip; legitimate
        uses (joiners in Persian, emoji sequences, allowed flags, ...) stay and are counted."""
        if text.isascii():
            return text
        if self._rules is None:
            self._rules, self._clean = _text_rules(self._settings)
        cleaned, counts = self._clean(text, self._rules)
        if counts:
            self._add(surface, counts)
        return cleaned

    def value(self, value: Any, surface: str) -> Any:
        """Clean every string in nested dicts, lists and tuples, keys included.

        Other values are returned as they are. The data must be acyclic, as JSON is, and
        nested no deeper than a JSON parser allows (pydantic's stops at 200 levels); deeper
        data raises RecursionError, which the caller treats as a failed result.
        """
        if isinstance(value, str):
            return self.text(value, surface)
        if isinstance(value, dict):
            return self._mapping(value, surface)
        if isinstance(value, list | tuple):
            return self._sequence(value, surface)
        return value

    def meta(self, meta: Mapping[Any, Any] | None, surface: str = "meta") -> dict[str, Any] | None:
        """The model-facing part of a `_meta` mapping, or None when nothing is left.

        Drops (and counts) non-string keys, keys reserved for the protocol, values that cannot
        be serialized to JSON and keys that collide once cleaned; cleans the rest.
        """
        if meta is None:
            return None
        kept: dict[str, Any] = {}
        changed = False
        for key, item in meta.items():
            entry = self._meta_entry(key, item, surface, kept)
            if isinstance(entry, str):
                self._add(surface, ((entry, 1),))
                changed = True
                continue
            kept[entry[0]] = entry[1]
            changed = changed or entry[0] is not key or entry[1] is not item
        if not kept:
            return None
        return meta if not changed and isinstance(meta, dict) else kept

    def note(self, surface: str, kind: str, count: int = 1) -> None:
        """Count what a caller changed itself (a `MEDIA:` line it marked) in this tally."""
        if count:
            self._add(surface, ((kind, count),))

    def counts(self) -> dict[str, dict[str, int]]:
        """What was stripped so far, as `{surface: {kind: count}}` (a fresh plain dict)."""
        return {surface: dict(kinds) for surface, kinds in self._tally.items()}

    def _meta_entry(
        self, key: object, item: Any, surface: str, kept: Mapping[str, Any]
    ) -> tuple[str, Any] | str:
        """The cleaned key and value, or the kind of drop to count."""
        if not isinstance(key, str):
            return "non_string_keys"
        clean_key = self.text(key, surface)
        if is_reserved_meta_key(clean_key, self._settings):
            return "reserved_keys"
        if not _json_serializable(item):
            return "unserializable"
        if clean_key in kept:
            return "duplicate_keys"
        return clean_key, self.value(item, surface)

    def _mapping(self, mapping: dict[Any, Any], surface: str) -> dict[Any, Any]:
        cleaned: dict[Any, Any] = {}
        changed = False
        for key, item in mapping.items():
            clean_key = self.text(key, surface) if isinstance(key, str) else key
            if clean_key in cleaned:
                # Two keys that differ only by hidden characters: the first one seen wins.
                self._add(surface, (("duplicate_keys", 1),))
                changed = True
                continue
            clean_item = self.value(item, surface)
            cleaned[clean_key] = clean_item
            changed = changed or clean_key is not key or clean_item is not item
        return cleaned if changed else mapping

    def _sequence(
        self, items: list[Any] | tuple[Any, ...], surface: str
    ) -> list[Any] | tuple[Any, ...]:
        cleaned = [self.value(item, surface) for item in items]
        if all(new is old for new, old in zip(cleaned, items, strict=True)):
            return items
        return tuple(cleaned) if isinstance(items, tuple) else cleaned

    def _add(self, surface: str, counts: Counts) -> None:
        kinds = self._tally.setdefault(surface, {})
        for kind, count in counts:
            if kind.endswith(_FLAGGED) and kind not in kinds:
                _warn_flagged(surface, kind, count)
            kinds[kind] = kinds.get(kind, 0) + count


def _text_rules(
    settings: SanitizeSettings,
) -> tuple[TextRules, Callable[[str, TextRules], tuple[str, Counts]]]:
    """The compiled rules (cached per settings value) and the function that applies them,
    imported here, once per sanitizer, so a text's cleaning pays no import statement."""
    from ._text import clean_text, compile_text_rules

    return compile_text_rules(settings), clean_text


def _warn_flagged(surface: str, kind: str, count: int) -> None:
    # Once per channel and surface of a decision: the record holds the running count.
    channel = kind.removesuffix(_FLAGGED)
    _LOG.warning(
        "untrusted `%s` text holds %d %s character(s) with no legitimate use, kept because "
        "`sanitize.invisible.%s` is `flag`",
        surface,
        count,
        channel.replace("_", " "),
        channel,
    )


def _json_serializable(value: Any) -> bool:
    # Strict JSON: NaN and infinities have no JSON spelling and break some providers' parsers.
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        # Not swallowed: the caller drops the value and counts it in the decision record.
        return False
    return True
