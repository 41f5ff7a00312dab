"""What an MCP tool result gives besides the model's text: the budget shared by every copy of
an image, the structured content and `_meta` as the lane left them, the schema check, and the
parts for the client (`ClientParts`).

The structured content is a second copy of the result (`wire._copies`): when the tool declares
an output schema it goes to the client with each image as the lane left it (the fitted bytes
of an attached image, else its `MEDIA:` path), so an image attached and copied there is sent
twice and takes its budget twice; the copy written into the model's text, and `_meta`, carry
references only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._routed import ClientParts
from ..images import ProcessedImage
from ..wire._blocks import FoundImage, ReadResult
from ..wire._schemas import schema_problem
from ..wire._wire import ToolResult, annotations_wire
from ._lane import LaneContext
from ._user import UserParts

__all__ = ["Copies", "Shares", "client_parts", "schema_check", "structured_record"]


@dataclass(frozen=True)
class Shares:
    """How a result's image budget is shared out: each copy of an image sent as pixels takes
    its part (an image in the content and in the structured content is sent twice)."""

    total: int | None
    copies: int
    user: int | None

    @classmethod
    def of(cls, read: ReadResult, total: int | None, declared: bool) -> Shares:
        """`declared`: the structured content goes to the client too (an output schema)."""
        counts = {found.index: 1 for found in read.images}
        for _, index in read.structured.payloads if read.structured and declared else ():
            counts[index] += 1
        copies = max(counts.values(), default=1)
        users = sum(1 for item in read.passed if isinstance(item, FoundImage))
        sent = users + copies * sum(1 for found in read.images if found.for_model)
        user = None if total is None else total // max(1, sent)
        return cls(total, copies, user)

    def for_model(self, context: LaneContext, user: UserParts) -> LaneContext:
        if self.total is None:
            return context
        left = max(0, self.total - user.image_chars)
        return replace(context, result_budget=left // self.copies)


@dataclass(frozen=True)
class Copies:
    """The structured content and `_meta` as the lane left them: for the client (fitted
    images) and for the model's text (references only)."""

    structured: Any = None
    structured_text: Any = None
    meta: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, read: ReadResult, attached: Mapping[int, ProcessedImage]) -> Copies:
        references = read.references()
        copy = read.structured
        meta = read.meta.rendered({}, references) if read.meta is not None else None
        if copy is None:
            return cls(meta=meta)
        return cls(copy.rendered(attached, references), copy.rendered({}, references), meta)


def schema_check(
    output_schema: Mapping[str, Any] | None, structured: Any, clean: ToolResult
) -> str | None:
    if output_schema is None or clean.is_error:
        return None
    if structured is None:
        return "the tool declares an output schema but its result has no structured content"
    return schema_problem(output_schema, structured)


def structured_record(read: ReadResult, declared: bool, problem: str | None) -> dict[str, Any]:
    images = sorted({index for _, index in read.structured.payloads} if read.structured else ())
    record: dict[str, Any] = {
        "present": read.structured is not None,
        "output_schema": declared,
        "images": images,
    }
    if declared:
        record["valid"] = problem is None
        if problem is not None:
            record["problem"] = problem
    return record


def client_parts(
    read: ReadResult,
    attached: Sequence[Mapping[str, Any]],
    user: UserParts,
    declared: bool,
    problem: str | None,
) -> ClientParts:
    """What the client gets besides the model's text and images; `attached`: the record's
    entries of the attached images, in order."""
    by_index = {found.index: found for found in read.images}
    image_annotations = tuple(
        annotations_wire(by_index[done["index"]].annotations) for done in attached
    )
    return ClientParts(
        text_annotations=read.annotations,
        image_annotations=image_annotations,
        passed=tuple(user.blocks),
        structured_output=declared,
        schema_problem=problem,
    )
