"""`visiongate route`: route a tool result given as files; print the payload and the record.

Standard output gets one JSON document, `{"schema_version": 1, "payload": ..., "record": ...}`
(`visiongate/schemas/route-output.json`); `--out FILE` also writes the payload to FILE (and
names it in `payload_file`). A file that is not a usable image is refused inside the result
(exit 0), never with a traceback; a file that cannot be read at all is an input error (2).
"""

from __future__ import annotations

import argparse

from visiongate.cli import EXIT_OK, EXIT_TOOL_ERROR
from visiongate.cli._common import (
    UsageError,
    add_gate_arguments,
    check_gate_inputs,
    check_input_file,
    checked,
    command_label,
    fail,
    reason,
    write_output,
)
from visiongate.kernel.shapes import API_NAMES  # the shapes' own list; imports nothing heavy

# Not `typing.TYPE_CHECKING`; asyncio, pathlib, base64 and mimetypes imported where they are
# used: `route --help`, `mcp --help` and `demo --help` import this module (issue 37).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from visiongate.adapters._routed import RoutedResult
    from visiongate.adapters._router import Router


# As `visiongate.engine.SOURCES`, written out so that `route --help` imports neither the
# engine nor the MCP SDK (tests check they agree). The API shapes are `visiongate.kernel.shapes`'s
# own list: that package imports nothing heavy.
SOURCES = ("mcp", "computer_use", "browser", "vision_analyze")
SCHEMA_VERSION = 1
_SINGLE_IMAGE_SOURCES = ("computer_use", "browser", "vision_analyze")
MAX_IMAGE_FILE_BYTES = 256 * 1024 * 1024
"""The largest `--image` file read: far past any image the router would fit."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", required=True, choices=SOURCES, help="which tool made it")
    parser.add_argument(
        "--image", action="append", required=True, metavar="FILE", help="an image (repeatable)"
    )
    parser.add_argument("--text", default="", help="the tool's own text output")
    parser.add_argument("--question", default="", help="vision_analyze: the question asked")
    parser.add_argument("--tool-name", help="mcp: the tool's name (Gemini's functionResponse)")
    add_target_arguments(parser)
    add_gate_arguments(parser)
    add_output_arguments(parser)


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", required=True, help="main model's provider, e.g. `anthropic`")
    parser.add_argument("--model", required=True, help="main model, e.g. `claude-sonnet-4-5`")


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api", choices=API_NAMES, help="payload shape (default: the provider's own)"
    )
    parser.add_argument("--out", metavar="FILE", help="write the payload here as JSON")
    parser.add_argument(
        "--cache-dir", help="image cache (default: $VISIONGATE_CACHE_DIR or ~/.cache)"
    )
    parser.add_argument("--tool-call-id", default="call_0", help="id of the tool call answered")


def run(args: argparse.Namespace) -> int:
    if args.source in _SINGLE_IMAGE_SOURCES and len(args.image) != 1:
        raise UsageError(f"`{args.source}` takes exactly one --image, not {len(args.image)}")
    for image in args.image:
        check_input_file(image, "image")
    check_gate_inputs(args)
    import asyncio

    router, routed = checked(lambda: asyncio.run(route_files(args)))
    return checked(lambda: emit(router, routed, args))


async def route_files(args: argparse.Namespace) -> tuple[Router, RoutedResult]:
    """Load the gate, read the files, route them as the given source."""
    from pathlib import Path

    router = build_router(args)
    # Absolute, so a `MEDIA:` line still names the file wherever the agent reads it.
    files = [Path(name).resolve() for name in args.image]
    # Routed for the shape it will be rendered in, so the record says what the payload carries.
    target = {"provider": args.provider, "model": args.model, "api": args.api}
    if args.source == "mcp":
        result = mcp_result(files, args.text)
        return router, await router.mcp(result, tool_name=args.tool_name, **target)
    data = read_image_file(files[0])
    if args.source == "vision_analyze":
        routed = await router.vision_analyze(data, args.question, path=str(files[0]), **target)
        return router, routed
    return router, await router.screenshot(
        data, source=args.source, path=str(files[0]), text=args.text, **target
    )


def read_image_file(path: Path) -> bytes:
    """An `--image` file: a regular file of at most `MAX_IMAGE_FILE_BYTES`, else `UsageError`
    (a 2 GB file was read whole, 7.1 GB of memory, before it was refused)."""
    from visiongate.kernel._files import read_regular_file

    try:
        return read_regular_file(path, MAX_IMAGE_FILE_BYTES)
    except OSError as error:
        raise UsageError(f"cannot read the image `{path}`: {reason(error)}") from None


def build_router(args: argparse.Namespace) -> Router:
    from visiongate.adapters._router import Router
    from visiongate.engine import Gate

    gate = Gate.load(args.policy, args.config, args.catalog, args.registry)
    return Router(gate, cache=args.cache_dir)


def mcp_result(files: list[Path], text: str) -> dict[str, Any]:
    """An MCP result as a server would send it on the wire: the text, then one image block per
    file, declared by file extension (the router sniffs the bytes and trusts no declaration)."""
    import base64
    import mimetypes

    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for file in files:
        declared = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        encoded = base64.b64encode(read_image_file(file)).decode("ascii")
        blocks.append({"type": "image", "data": encoded, "mimeType": declared})
    return {"content": blocks}


def emit(router: Router, routed: RoutedResult, args: argparse.Namespace) -> int:
    """Print the payload and the decision record (and write the payload to `--out`)."""
    payload = router.payload(routed, args.api, tool_call_id=args.tool_call_id)
    record: dict[str, Any] = {**routed.record, "payload": payload.summary()}
    record.setdefault("provider", None)
    record.setdefault("model", None)
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "payload": payload.as_json()}
    if args.out:
        write_output(args.out, _json(payload.as_json()) + "\n")
        document["payload_file"] = args.out
    document["record"] = record
    print(_json(document))
    if routed.is_error:
        # Routed and printed like any result (a model is shown a tool's errors too), but the
        # call did not do what was asked: `mcp call --tool nosuchtool` must not exit 0.
        name = f"`{routed.tool_name}`" if routed.tool_name else "the tool"
        first = next((line for line in routed.text.splitlines() if line.strip()), "")
        from visiongate.kernel._display import one_line

        said = one_line(first, 200, unprintable="escape")
        fail(command_label(args), f"{name} answered with an error: {said}")
        return EXIT_TOOL_ERROR
    return EXIT_OK


def _json(value: Any) -> str:
    from visiongate.kernel._display import json_text

    return json_text(value, indent=2)
