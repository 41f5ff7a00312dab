"""Keep a conversation's images bounded: every request re-sends every image in the history.

`bound_history` takes the conversation an agent is about to send (any of the six API
shapes, `_history_slots`) and returns a copy in which:

- at most `max_calls_per_image` attachments of the same image content remain (the earliest);
  later ones become a note naming the image's `MEDIA:` path (what the policy's
  `max_calls_per_image` means, with no `seen_hashes` for the caller to keep);
- at most `keep_recent_images` images remain, the most recent; older ones become a one-line
  note and their `MEDIA:` path, so the model can ask its image tool for another look (the
  router's `image_tool`: `vision_analyze` in an agent, `visiongate_view_image` in the proxy).

Images are removed in chunks, not one per request. Providers cache the longest unchanged
prefix of a request (Anthropic's and OpenAI's prompt caches, Gemini's implicit cache): a
helper that drops the oldest image each time the newest arrives changes the start of the
conversation on every request and never hits the cache. Removing `chunk` images at once
(half of `keep_recent_images` by default) keeps the prefix byte-identical for `chunk`
requests in a row. Unlike the reference computer-use agent, which rounds the removal down
and so may keep more than it was told, the removal is rounded up: a request never carries more
than `keep_recent_images` images. Repeats are counted over the images the request still
carries, so an image whose first copy scrolled out is shown again rather than lost.

The input is never changed; messages without a replaced image come back equal, so the prefix
before the first replacement is byte-identical once serialized.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._cache import UNKNOWN_EXTENSION, ImageCache, extension_for
from ._history_slots import Edits, Slot, find_slots
from ._routed import ask_tool, media_line
from .images import sniff_media_type

__all__ = ["BoundedHistory", "bound_history", "default_chunk"]


@dataclass(frozen=True)
class BoundedHistory:
    """The conversation to send, and what was done to it."""

    messages: list[dict[str, Any]]
    images_before: int
    images_after: int
    removed: int
    """Older images replaced because of `keep_recent_images`."""
    repeated: int
    """Repeats replaced because of `max_calls_per_image`."""


def default_chunk(keep_recent_images: int) -> int:
    """How many images go at once: half the kept count, so at least half always stay."""
    return max(1, keep_recent_images // 2)


def bound_history(
    conversation: Sequence[Mapping[str, Any]],
    api: str,
    *,
    keep_recent_images: int | None = None,
    max_calls_per_image: int | None = None,
    chunk: int | None = None,
    cache: ImageCache | None = None,
    image_tool: str | None = "vision_analyze",
) -> BoundedHistory:
    """A copy of `conversation` (messages, items or contents of `api`) with its images bounded.

    `cache` names each removed image by a `MEDIA:` path (a file the router wrote, else one
    written from the conversation's bytes); without it no path is given. Writing the cache is
    blocking I/O: call this off the event loop in async code. None for a limit: no limit.
    `image_tool` is the tool the notes tell the model to call with that path; None: the model
    has none, and the notes give the path alone.
    """
    for name, value in (("keep_recent_images", keep_recent_images), ("chunk", chunk)):
        if value is not None and value < 1:
            raise ValueError(f"`{name}` must be at least 1, not {value}")
    if max_calls_per_image is not None and max_calls_per_image < 1:
        raise ValueError(f"`max_calls_per_image` must be at least 1, not {max_calls_per_image}")
    messages = copy.deepcopy([dict(message) for message in conversation])
    slots = find_slots(messages, api)
    removal = _removal(len(slots), keep_recent_images, chunk)
    notes = _Notes(cache, keep_recent_images, image_tool)
    edits = Edits()
    for slot in slots[:removal]:
        slot.replace(notes.removed(slot), edits)
    repeated = _replace_repeats(slots[removal:], max_calls_per_image, notes, edits)
    edits.sweep()
    return BoundedHistory(
        messages=messages,
        images_before=len(slots),
        images_after=len(slots) - removal - repeated,
        removed=removal,
        repeated=repeated,
    )


def _removal(total: int, keep: int | None, chunk: int | None) -> int:
    """How many of the oldest images go: a whole number of chunks, enough to leave at most
    `keep` (rounded up, so the bound holds), and all of them at most."""
    if keep is None or total <= keep:
        return 0
    size = chunk or default_chunk(keep)
    chunks = -(-(total - keep) // size)
    return min(total, chunks * size)


def _replace_repeats(slots: Sequence[Slot], limit: int | None, notes: _Notes, edits: Edits) -> int:
    if limit is None:
        return 0
    seen: Counter[str] = Counter()
    replaced = 0
    for slot in slots:
        key = slot.key
        seen[key] += 1
        if seen[key] > limit:
            slot.replace(notes.repeated(slot, seen[key] - 1), edits)
            replaced += 1
    return replaced


class _Notes:
    # A removed image is named by a file in the image cache: the one the router wrote, else
    # one written now from the conversation's own bytes (once: `find` comes first). Only a
    # raster image the image stage recognises is written.

    """The one-line notes that take an image's place, each with its `MEDIA:` path if known."""

    def __init__(self, cache: ImageCache | None, keep: int | None, image_tool: str | None) -> None:
        self._cache = cache
        self._keep = keep
        self._image_tool = image_tool

    def removed(self, slot: Slot) -> str:
        note = (
            f"[an older image was removed to keep requests small (the {self._keep} most recent "
            "are kept)"
        )
        return self._with_path(note, slot)

    def repeated(self, slot: Slot, earlier: int) -> str:
        note = (
            f"[the same image was already attached {earlier} time(s) earlier in this "
            "conversation, so it is not attached again"
        )
        return self._with_path(note, slot)

    def _with_path(self, note: str, slot: Slot) -> str:
        path = self._path(slot)
        if path is None:
            return note + "]"
        return f"{note}{ask_tool(self._image_tool, 'it again')}]\n" + media_line(path)

    def _path(self, slot: Slot) -> str | None:
        digest = slot.sha256
        if self._cache is None or digest is None:
            return None
        found = self._cache.find(digest)
        if found is not None:
            return str(found)
        raw = slot.raw_bytes()
        assert raw is not None  # a digest is of raw bytes
        sniffed = sniff_media_type(raw)
        if extension_for(sniffed) == UNKNOWN_EXTENSION:
            return None
        return str(self._cache.write(raw, sniffed).path)
