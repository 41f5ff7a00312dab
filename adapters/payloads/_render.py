"""Render routed results as the tool-result messages of an API shape: the one entry point.

`render_payload` renders one result, `render_turn` (`_turn`) the results of one assistant
turn; both come here. Each shape writes itself (`visiongate.kernel.shapes`, one module per shape):

| api                | the tool result                             | its images                 |
|--------------------|---------------------------------------------|----------------------------|
| `anthropic`        | user message, `tool_result` block           | base64 `image` blocks      |
| `openai-responses` | `function_call_output` item                 | `input_image` data URLs    |
| `openai-chat`      | `tool` message (text only)                  | a following `user` message |
| `gemini`           | `functionResponse` part (Gemini 3)          | `functionResponse.parts`   |
| `bedrock`          | user message, `toolResult` block (Converse) | `image` blocks             |
| `ollama`           | `tool` message (native `/api/chat`)         | the message's `images`     |

Rendering decides nothing: the gate chose the lane and the adapter chose the images. Three
things happen here, in this order:

1. the last-resort guard (`_guard`): an image is sent only in the native lane, on a route
   that does not refuse tool-result images, within the shape's formats and limits; otherwise
   it is withheld and a one-line summary takes its place in the text;
2. the route's message rules (`visiongate.kernel.shapes` `bridged`): a provider that rejects a
   `user` message right after a `tool` message (Mistral) gets an `assistant` turn between;
3. the record: when the guard withheld images the record lists as attached (another shape
   than the one the result was routed for), the record is amended (those images move to
   `refused`) and written again to the trace sink the result's record went to (or the one
   given), so a record never claims an image the payload does not carry, whichever API
   renders it. `Payload.records` holds each result's record as it now stands.

Bedrock's image `bytes` come in two forms: `Payload.messages` is the JSON wire form (base64
text, as the Converse HTTP API and the AWS CLI take it) and `Payload.boto3_messages()` the
same messages with raw `bytes`, as boto3's `converse` takes them. Gemini's
`functionResponse.name` is the name in the model's `functionCall`: it must be given
(`tool_name=`, or the routed result's own), never guessed.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from visiongate.engine.facts import ProviderRegistry
from visiongate.kernel.shapes import API_NAMES, Message, Parts, bridged, shape_named

from .._routed import RoutedResult, refuse_attached
from ..images import ProcessedImage
from ._guard import Withheld, guard_images, limits_for

__all__ = ["API_NAMES", "Message", "Payload", "TraceSink", "Withheld", "render", "render_payload"]

TraceSink = Callable[[dict[str, Any]], None]
_LOG: Final = logging.getLogger("visiongate")


@dataclass(frozen=True)
class Payload:
    """The messages to append to the conversation for one tool result (or one turn)."""

    api: str
    messages: tuple[Message, ...]
    images_sent: int
    withheld: tuple[Withheld, ...] = ()
    records: tuple[Mapping[str, Any], ...] = ()
    """Each result's decision record as it stands after rendering, in call order: amended
    when rendering withheld images the record listed as attached (write these yourself when
    you routed with `trace=False`)."""

    def as_json(self) -> dict[str, Any]:
        """The messages as JSON (for Bedrock: base64 image `bytes`, the HTTP API's form)."""
        return {"api": self.api, "messages": list(self.messages)}

    def boto3_messages(self) -> list[Message]:
        """Bedrock only: the messages with raw image `bytes`, as boto3's `converse` takes them
        (`messages` holds base64 text, the JSON wire form)."""
        if self.api != "bedrock":
            raise ValueError(
                f"raw image bytes are a `bedrock` form, and this payload is `{self.api}`"
            )
        return [_raw_bytes(message) for message in self.messages]

    def summary(self) -> dict[str, Any]:
        """What rendering did, for the decision record."""
        return {
            "api": self.api,
            "images_sent": self.images_sent,
            "withheld": [item.as_dict() for item in self.withheld],
        }


def render_payload(
    result: RoutedResult,
    api: str | None = None,
    *,
    tool_call_id: str = "call_0",
    tool_name: str | None = None,
    registry: ProviderRegistry | None = None,
    trace: TraceSink | None = None,
) -> Payload:
    """The tool-result message(s) of `result` for `api` (default: the shape the result was
    routed for, which is the route's own unless the caller asked for another).

    `registry` supplies another API's formats and limits when `api` is not the route's; the
    bundled registry is used when it is not given. `trace` is where an amended record is
    written (default: the sink the result's record was written to)."""
    return render([(result, tool_call_id, tool_name)], api, registry=registry, trace=trace)


@dataclass(frozen=True)
class _Rendered:
    messages: list[Message]
    sent: int
    withheld: tuple[Withheld, ...]
    record: Mapping[str, Any]


def render(
    calls: Sequence[tuple[RoutedResult, str, str | None]],
    api: str | None = None,
    *,
    registry: ProviderRegistry | None = None,
    trace: TraceSink | None = None,
) -> Payload:
    """The messages of `calls` (`(result, call_id, tool_name)`, in call order) for `api`
    (default: the shape the first result was routed for), merged as one turn."""
    first = calls[0][0]
    api = api or first.api or first.route.api
    if api not in API_NAMES:
        raise ValueError(f"unknown api `{api}`: expected one of {', '.join(API_NAMES)}")
    shape = shape_named(api)
    rendered = [
        _one(result, api, call_id, name, registry, trace) for result, call_id, name in calls
    ]
    messages = shape.merge([item.messages for item in rendered])
    if any(result.route.user_after_tool == "bridge" for result, _, _ in calls):
        messages = bridged(messages)
    return Payload(
        api=api,
        messages=tuple(messages),
        images_sent=sum(item.sent for item in rendered),
        withheld=tuple(withheld for item in rendered for withheld in item.withheld),
        records=tuple(item.record for item in rendered),
    )


def _one(
    result: RoutedResult,
    api: str,
    call_id: str,
    tool_name: str | None,
    registry: ProviderRegistry | None,
    trace: TraceSink | None,
) -> _Rendered:
    images, withheld = guard_images(
        result.images,
        lane=result.lane,
        route=result.route,
        is_error=result.is_error,
        limits=limits_for(result.route, api, registry),
    )
    text = _with_summaries(result.text, result.images, withheld) or "(the tool returned no text)"
    name = tool_name or result.tool_name
    if api == "gemini" and not name:
        raise ValueError(
            f"`gemini` needs the function name of call `{call_id}`: pass `tool_name=` "
            "(the name in the model's functionCall)"
        )
    messages = shape_named(api).render(Parts(text, images, result.is_error, call_id, name))
    record = result.record
    if withheld and result.images and record:
        record = amended(record, api, withheld)
        sink = trace or result.sink
        if sink is not None:
            sink(dict(record))
    return _Rendered(messages, len(images), withheld, record)


def amended(record: Mapping[str, Any], api: str, withheld: Sequence[Withheld]) -> dict[str, Any]:
    """`record` once a payload for `api` withheld more images: those move from `attached` to
    `refused` (by their position among the attached images), and the record says why."""
    copy = dict(record)
    dropped = {item.index - 1: f"payload guard ({api}): {item.reason}" for item in withheld}
    execution = refuse_attached(copy.get("execution") or {}, dropped)
    execution["api"] = api
    copy["execution"] = execution
    copy["amended"] = f"rendered for `{api}`, which withheld {len(dropped)} image(s)"
    _LOG.warning("visiongate: decision %s amended: %s", record.get("decision_id"), copy["amended"])
    return copy


def _with_summaries(
    text: str, images: Sequence[ProcessedImage], withheld: Sequence[Withheld]
) -> str:
    """`text` plus one line per withheld image, so the model knows what it is not seeing."""
    lines = [text] if text else []
    for item in withheld:
        image = images[item.index - 1]
        kind = image.media_type.partition("/")[2].upper()
        lines.append(
            f"[image {item.index} ({image.width}x{image.height} {kind}) not sent: {item.reason}]"
        )
    return "\n".join(lines)


def _raw_bytes(message: Message) -> Message:
    """A Bedrock message with each image's base64 `bytes` decoded (a copy; tool results nest
    their images one level down)."""
    return {**message, "content": [_raw_block(block) for block in message.get("content", [])]}


def _raw_block(block: Message) -> Message:
    if "image" in block:
        source = block["image"]["source"]
        raw = base64.b64decode(source["bytes"])
        return {**block, "image": {**block["image"], "source": {**source, "bytes": raw}}}
    if "toolResult" in block:
        result = block["toolResult"]
        content = [_raw_block(item) for item in result.get("content", [])]
        return {**block, "toolResult": {**result, "content": content}}
    return block
