"""The JSON copies of a result (structured content, `_meta`) and the images inside them.

`structuredContent` is a second copy of the result: clients validate it against the tool's
output schema, and some hand it to the model instead of the content. So it gets what the
content gets: the server's `MEDIA:` lines marked `[unverified] ` in every string, and each
image payload (`_inline`) taken for an image of the result, the same image as a content block
with the same bytes, else one more image. `InlineCopy.rendered` then writes each payload back
as the line the model reads for that image (its `MEDIA:` path, or why it was refused) in place
of the base64, whatever the lane: a client may hand this copy to the model as text
(openai-agents' `use_structured_content`), and an attached image's pixels are in the content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..sanitize._media import mark_unverified_media
from ._inline import InlineImage, as_reference, find_inline, replace_inline

__all__ = ["InlineCopy", "mark_strings", "read_copy"]


@dataclass(frozen=True)
class InlineCopy:
    """A JSON value of the result, cleaned and marked, with its images located."""

    value: Any
    payloads: tuple[tuple[InlineImage, int], ...] = ()
    """Each payload with the 1-based index of the image of the result it is."""

    def rendered(self, references: Mapping[int, str]) -> Any:
        """The value with every payload as the line the model reads for its image
        (`references`): never base64, attached or not."""
        indexes = {id(payload): index for payload, index in self.payloads}

        def replacement(payload: InlineImage) -> Any:
            return as_reference(payload, references[indexes[id(payload)]])

        return replace_inline(self.value, [payload for payload, _ in self.payloads], replacement)


def read_copy(value: Any, image_index: Callable[[InlineImage], int]) -> tuple[InlineCopy, int]:
    """`value` (sanitized) with its strings marked, and its payloads matched to images by
    `image_index` (which adds an image of the result for a payload it has not seen); also how
    many `MEDIA:` lines were marked."""
    marked, count = mark_strings(value)
    payloads = tuple((payload, image_index(payload)) for payload in find_inline(marked))
    return InlineCopy(marked, payloads), count


def mark_strings(value: Any) -> tuple[Any, int]:
    """`value` with `[unverified] ` before every `MEDIA:` line in its string values (keys are
    names, not text a model reads as a line); `value` itself when nothing was marked."""
    if isinstance(value, str):
        return mark_unverified_media(value)
    if isinstance(value, Mapping):
        items = {key: mark_strings(item) for key, item in value.items()}
        count = sum(found for _, found in items.values())
        return ({key: item for key, (item, _) in items.items()} if count else value), count
    if isinstance(value, list | tuple):
        marked = [mark_strings(item) for item in value]
        count = sum(found for _, found in marked)
        return ([item for item, _ in marked] if count else value), count
    return value, 0
