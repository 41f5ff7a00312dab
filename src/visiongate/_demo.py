"""`visiongate demo`: the whole mission end to end, offline, on the embedded defaults.

The bundled default policy, catalog and registry decide; the example MCP server (started over
stdio with the official SDK) and a locally drawn computer-use capture produce the images; the
local OCR backend describes them in the text lane. Every provider payload and the JSONL trace
are written to an output folder.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from PIL import Image, ImageDraw, ImageFont

from visiongate.adapters import RoutedResult, Router
from visiongate.adapters.mcp._session import BoundedSession, McpLimits, open_session
from visiongate.adapters.mcp.example_server import server_command
from visiongate.adapters.vision import VisionBackend, backend_from_config
from visiongate.engine import Gate

TEXT_MODE: Mapping[str, Any] = {"agent": {"image_input_mode": "text"}}


@dataclass(frozen=True)
class Scenario:
    slug: str
    title: str
    provider: str
    model: str
    source: str
    tool: str | None = None
    """The example server's tool (MCP scenarios)."""
    config: Mapping[str, Any] = field(default_factory=dict)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("vision-model", "vision model, MCP screenshot", "anthropic",
             "claude-sonnet-4-5", "mcp", "screenshot"),
    Scenario("text-only-mcp", "text-only model, MCP screenshot", "openrouter",
             "deepseek/deepseek-v3.2", "mcp", "screenshot"),
    Scenario("text-only-capture", "text-only model, computer-use", "openrouter",
             "deepseek/deepseek-v3.2", "computer_use"),
    Scenario("mode-text", "mode text, vision model", "anthropic",
             "claude-sonnet-4-5", "computer_use", config=TEXT_MODE),
    Scenario("six-images", "six images in one MCP result", "openai", "gpt-5", "mcp",
             "gallery"),
    Scenario("broken-image", "truncated PNG from the server", "anthropic",
             "claude-sonnet-4-5", "mcp", "broken_image"),
    Scenario("smuggling", "TAG smuggling, reserved _meta", "anthropic",
             "claude-sonnet-4-5", "mcp", "smuggle"),
)  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    scenario: Scenario
    routed: RoutedResult
    payload_file: Path
    seconds: float


class Progress:
    """Progress on standard error: a ticking elapsed time on a terminal, plain lines otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def say(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    @contextmanager
    def working(self, text: str) -> Iterator[None]:
        start = time.monotonic()
        done = threading.Event()
        ticking = self.stream.isatty()

        def tick() -> None:
            while not done.wait(0.25):
                elapsed = time.monotonic() - start
                print(f"\r  {text} ... {elapsed:4.1f}s", end="", file=self.stream, flush=True)

        ticker = threading.Thread(target=tick, daemon=True) if ticking else None
        if ticker is not None:
            ticker.start()
        try:
            yield
        finally:
            done.set()
            if ticker is not None:
                ticker.join()
            elapsed = time.monotonic() - start
            prefix = "\r" if ticking else ""
            print(f"{prefix}  {text} ... done in {elapsed:.1f}s", file=self.stream, flush=True)


def capture_png(width: int = 1920, height: int = 1080) -> bytes:
    """A computer-use style screen capture: a terminal window with a failing test run."""
    image = Image.new("RGB", (width, height), (236, 239, 244))
    draw = ImageDraw.Draw(image)
    font = _font(26)
    draw.rectangle((0, 0, width, 44), fill=(46, 52, 64))
    draw.text((24, 8), "Terminal - ~/src/shop - pytest", font=font, fill=(236, 239, 244))
    draw.rectangle((120, 110, width - 120, height - 110), fill=(30, 34, 42))
    lines = (
        "$ pytest tests/test_checkout.py -q",
        "..........F....",
        "FAILED tests/test_checkout.py::test_discount_applies_once",
        "AssertionError: expected total 90.00 EUR, got 81.00 EUR",
        "  cart = Cart(items=[Book(price=100)])",
        "  cart.apply(Coupon('WINTER10'))",
        "  cart.apply(Coupon('WINTER10'))",
        "1 failed, 14 passed in 2.31s",
        "$ git log --oneline -3",
        "a41c9e2 Apply coupons at checkout",
        "77d0b13 Add winter campaign coupons",
        "$ _",
    )
    for row, line in enumerate(lines):
        color = (191, 97, 106) if "FAILED" in line or "Error" in line else (216, 222, 233)
        draw.text((160, 150 + row * 58), line, font=font, fill=color)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for candidate in (
        "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    ):
        if Path(candidate).exists():
            return ImageFont.truetype(candidate, size)
    return ImageFont.load_default(size=size)


class _Demo:
    def __init__(self, out: Path, progress: Progress) -> None:
        self.out = out
        self.progress = progress
        self.trace_path = out / "trace.jsonl"
        # One OCR backend for every scenario, so an image already described is not read twice.
        self.vision: VisionBackend = backend_from_config({})
        self.routers: dict[str, Router] = {}
        self.capture = capture_png()

    def router(self, scenario: Scenario) -> Router:
        key = json.dumps(scenario.config, sort_keys=True)
        if key not in self.routers:
            # The demo is reproducible: routes learned on this machine do not change it.
            gate = Gate.load(config=dict(scenario.config), trace=self.trace_path, routes=False)
            self.routers[key] = Router(gate, cache=self.out / "cache", vision=self.vision)
        return self.routers[key]

    async def run(self, session: BoundedSession, scenario: Scenario, number: int) -> Outcome:
        router = self.router(scenario)
        start = time.monotonic()
        label = f"[{number}/{len(SCENARIOS)}] {scenario.title}"
        with self.progress.working(label):
            if scenario.source == "mcp":
                assert scenario.tool is not None
                result = await session.call_tool(scenario.tool, {})
                routed = await router.mcp(
                    result, provider=scenario.provider, model=scenario.model,
                    tool_name=scenario.tool,
                )  # fmt: skip
            else:
                routed = await router.screenshot(
                    self.capture, source=scenario.source, provider=scenario.provider,
                    model=scenario.model, text="screen captured",
                )  # fmt: skip
        payload = router.payload(routed, tool_call_id=f"call_{number}", tool_name=scenario.tool)
        file = self.out / "payloads" / f"{number}-{scenario.slug}.{routed.route.api}.json"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(payload.as_json(), indent=2, ensure_ascii=False) + "\n")
        return Outcome(scenario, routed, file, time.monotonic() - start)


async def run_demo(
    out: Path, stream: TextIO = sys.stderr, limits: McpLimits | None = None
) -> list[Outcome]:
    """Run every scenario; write payloads and the trace under `out`. Each request to the
    example server is bounded by `limits` (a hung server ends the demo with `TimeoutError`)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "trace.jsonl").unlink(missing_ok=True)
    progress = Progress(stream)
    demo = _Demo(out, progress)
    progress.say("starting the example MCP server over stdio (official mcp SDK)")
    outcomes: list[Outcome] = []
    async with open_session(server_command(), limits=limits) as session:
        for number, scenario in enumerate(SCENARIOS, start=1):
            outcomes.append(await demo.run(session, scenario, number))
    return outcomes


def summary_rows(outcomes: Sequence[Outcome]) -> list[list[str]]:
    """The table a person reads: scenario, facts, lane, rule, images, bytes, what the model got."""
    rows = [["#", "scenario", "mode/catalog/aux/path", "lane", "rule", "images", "bytes",
             "what the model gets"]]  # fmt: skip
    for number, outcome in enumerate(outcomes, start=1):
        record = outcome.routed.record
        facts = record["facts"]
        rows.append(
            [
                str(number),
                outcome.scenario.title,
                "/".join(facts[name] for name in ("mode", "catalog", "aux", "path")),
                outcome.routed.lane,
                str(record["rule"]),
                _images(outcome.routed),
                _bytes(record["execution"]),
                _gist(outcome.routed),
            ]
        )
    return rows


def _images(routed: RoutedResult) -> str:
    execution = routed.record["execution"]
    found = execution.get("images_found", 1)
    if not routed.native:
        return f"{found} kept out"
    return f"{len(execution.get('attached', []))} of {found} attached"


def _bytes(execution: Mapping[str, Any]) -> str:
    before, after = execution.get("bytes_before", 0), execution.get("bytes_after", 0)
    if not after:
        return "-"
    return f"{before / 1024:.0f}K->{after / 1024:.0f}K"


def _gist(routed: RoutedResult) -> str:
    record = routed.record
    removed = _sanitized(record.get("sanitizer", {}))
    if removed:
        return removed
    if routed.descriptions:
        note = routed.descriptions[0]
        if not note.ok:
            return _cut(f"vision unavailable: {note.reason}")
        cached = " (cached)" if note.description is not None and note.description.cached else ""
        return _cut(f"OCR text{cached}: {_first_text_line(note.text)}")
    execution = record["execution"]
    refused = execution.get("refused", [])
    attached = execution.get("attached", [])
    if refused and not attached:
        return _cut(str(refused[0].get("reason", "refused")))
    if refused:
        return f"pixels; {len(refused)} more as MEDIA: paths only"
    if routed.native:
        return "pixels, scale note, MEDIA: path"
    return "MEDIA: path only, no pixels"


def _cut(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _first_text_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("[") and "] " in line and not line.startswith("[image"):
            return line.split("] ", 1)[1]
    return text.splitlines()[0] if text else ""


def _sanitized(counts: Mapping[str, Mapping[str, int]]) -> str:
    totals: dict[str, int] = {}
    for kinds in counts.values():
        for kind, count in kinds.items():
            totals[kind] = totals.get(kind, 0) + count
    removed = totals.get("tag_chars", 0)
    dropped = totals.get("reserved_keys", 0)
    if not (removed or dropped):
        return ""
    return f"cleaned: {removed} TAG chars, {dropped} reserved _meta keys"


def legend(outcomes: Sequence[Outcome]) -> str:
    """Which provider and model each scenario ran with, one line."""
    groups: dict[str, list[str]] = {}
    for number, outcome in enumerate(outcomes, start=1):
        name = f"{outcome.scenario.provider} {outcome.scenario.model}"
        groups.setdefault(name, []).append(str(number))
    return "models: " + "; ".join(f"{','.join(n)} {name}" for name, n in groups.items())


def excerpt(outcomes: Sequence[Outcome], slug: str, lines: int = 6) -> str:
    """The first lines of what the model reads in one scenario."""
    outcome = next(o for o in outcomes if o.scenario.slug == slug)
    shown = outcome.routed.text.splitlines()[:lines]
    return "\n".join(f"  | {line[:100]}" for line in shown)


def render_table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    return "\n".join(line.rstrip() for line in lines)
