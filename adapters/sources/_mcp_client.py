"""What an MCP tool result gives besides the model's text: the budget shared by every copy of
an image, the structured content and `_meta` as the lane left them, the schema check, and the
parts for the client (`ClientParts`).

The structured content is a second copy of the result (`wire._copies`): when the tool declares
an output schema it goes to the client, each image in it as the line the model reads for it
(its `MEDIA:` path), never base64: a client may hand that copy to the model as text, and an
attached image's pixels are in the content, once. The copy written into the model's text, and
`_meta`, are the same references.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._routed import ClientParts
from ..wire._blocks import FoundImage, ReadResult
from ..wire._wire import ToolResult, annotations_wire
from ._lane import LaneContext
from ._user import UserParts

__all__ = ["Copies", "Shares", "client_parts", "schema_check", "structured_record"]


@dataclass(frozen=True)
class Shares:
    """How a result's image budget is shared out: each image sent as pixels takes its part,
    the user's and the model's (the JSON copies carry references, no pixels)."""

    total: int | None
    user: int | None

    @classmethod
    def of(cls, read: ReadResult, total: int | None) -> Shares:
        users = sum(1 for item in read.passed if isinstance(item, FoundImage))
        sent = users + sum(1 for found in read.images if found.for_model)
        user = None if total is None else total // max(1, sent)
        return cls(total, user)

    def for_model(self, context: LaneContext, user: UserParts) -> LaneContext:
        if self.total is None:
            return context
        return replace(context, result_budget=max(0, self.total - user.image_chars))


@dataclass(frozen=True)
class Copies:
    """The structured content and `_meta` as the lane left them, each image a reference: the
    structured copy for the client (with an output schema), the same for the model's text."""

    structured: Any = None
    structured_text: Any = None
    meta: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, read: ReadResult) -> Copies:
        references = read.references()
        meta = read.meta.rendered(references) if read.meta is not None else None
        if read.structured is None:
            return cls(meta=meta)
        structured = read.structured.rendered(references)
        return cls(structured, structured, meta)


def schema_check(
    output_schema: Mapping[str, Any] | None, structured: Any, clean: ToolResult
) -> str | None:
    if output_schema is None or clean.is_error:
        return None
    if structured is None:
        return "the tool declares an output schema but its result has no structured content"
    # jsonschema loads with the first declared schema, not with the router (about 60 ms).
    from ..wire._schemas import schema_problem

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
