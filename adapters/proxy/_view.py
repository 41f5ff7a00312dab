"""The proxy's own tool: look at an image a result kept out, by the `MEDIA:` path it gave.

In the text lane, and for images past `max_images` in the native lane, the model reads a
`MEDIA:` path instead of pixels; the seed's advice is that it asks for the one it needs.
Through a proxy the server has no tool for that, so the proxy lists one of its own,
`visiongate_view_image` (prefixed, so it does not collide with a server's tool; not offered
when the server lists a tool of that name, or with `--no-image-tool`). It is appended to the
last page of `tools/list` and answered here, never sent to the server.

It takes only a path this proxy showed the model in this session: the exact string (with or
without `MEDIA:`), no normalizing, so `..`, another file in the cache directory or a path of
another session is refused. The file is opened without following a symlink, must be a
regular file, and its bytes must still hash to the name the cache gave it (`<sha256>.<ext>`),
so what is returned is exactly the image the proxy wrote. The image is routed as a
`vision_analyze` call: fitted for the model in the native lane, described by the auxiliary
backend in the text lane (`execution.text.vision_analyze`).

A call may ask for a part of the image instead of the whole (`images._process.image_part`):
`region`, a rectangle in the original's pixels (a zoom), or `rows_from`, the rows of a tall
page from an offset (what its tiles and description left out). The part is cut from the
cached original at 1:1 and fitted on its own, so it is never the tiles already sent.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._part_request import PART_TOOL, PartError, PartRequest
from .._routed import MEDIA_PREFIX
from ..sanitize._line import untrusted_line

__all__ = ["VIEW_TOOL", "ImageViews", "Viewed", "view_tool_definition"]

VIEW_TOOL: Final = PART_TOOL
_PATHS_KEPT: Final = 10_000
_MAX_FILE_BYTES: Final = 256 * 1024 * 1024
_REGION_KEYS: Final = ("left", "top", "width", "height")


def view_tool_definition() -> dict[str, Any]:
    """The tool as `tools/list` lists it."""
    return {
        "name": VIEW_TOOL,
        "title": "View an image kept out of the conversation",
        "description": (
            "Look at an image an earlier tool result did not show you, or a part of one in "
            "more detail. Pass the MEDIA: path that result gave (visiongate wrote it in this "
            "session); you get the image fitted for you, or a description of it when you read "
            "text only. Other paths are refused. To zoom, add `region` (left, top, width, "
            "height in the original image's pixels); for a tall page, `rows_from` (the rows "
            "from that offset, e.g. those its tiles left out)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The MEDIA: path from an earlier tool result, as given",
                },
                "question": {
                    "type": "string",
                    "description": "Optional: what you want to know about the image",
                },
                "region": {
                    "type": "object",
                    "description": "Optional: only this rectangle, in the original's pixels",
                    "properties": {key: {"type": "integer", "minimum": 0} for key in _REGION_KEYS},
                    "required": list(_REGION_KEYS),
                    "additionalProperties": False,
                },
                "rows_from": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Optional: for a tall page, the rows from this offset",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False, "idempotentHint": True},
    }


@dataclass(frozen=True)
class Viewed:
    """The image behind a path the model asked for, or why it cannot have it."""

    path: str
    data: bytes = b""
    question: str = ""
    problem: str | None = None
    part: PartRequest | None = None


class ImageViews:
    """The `MEDIA:` paths this session showed the model: the only files the tool reads."""

    def __init__(self) -> None:
        self._paths: dict[str, None] = {}

    def remember(self, paths: Iterable[str]) -> None:
        for path in paths:
            if path in self._paths:
                continue
            if len(self._paths) >= _PATHS_KEPT:
                del self._paths[next(iter(self._paths))]
            self._paths[path] = None

    def read(self, arguments: Any) -> Viewed:
        """The image `arguments` ask for (blocking: it reads the file)."""
        if not isinstance(arguments, Mapping) or not isinstance(arguments.get("path"), str):
            return Viewed("", problem="pass the MEDIA: path of an earlier result as `path`")
        question = arguments.get("question")
        try:
            part = PartRequest.from_arguments(arguments)
        except PartError as error:
            return Viewed("", problem=str(error))
        asked = arguments["path"].strip().removeprefix(MEDIA_PREFIX)
        shown = untrusted_line(asked, 200)
        if asked not in self._paths:
            return Viewed(
                shown,
                problem=f"`{shown}` is not an image this proxy showed you in this session",
            )
        data = _read_cached(asked)
        if isinstance(data, str):
            return Viewed(shown, problem=data)
        return Viewed(asked, data, question if isinstance(question, str) else "", part=part)


def _read_cached(path: str) -> bytes | str:
    """The file's bytes if it is still the image the cache wrote, else why not."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        return f"the image can no longer be read ({error.strerror or 'unreadable'})"
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_FILE_BYTES:
            return "the path no longer names the image the proxy wrote"
        data = stream.read(_MAX_FILE_BYTES + 1)
    if hashlib.sha256(data).hexdigest() != Path(path).stem:
        return "the file changed since the proxy wrote it"
    return data
