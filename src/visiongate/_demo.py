"""`visiongate demo`: the whole mission end to end, offline, on the embedded defaults.

The bundled default policy, catalog and registry decide; the example MCP server (started over
stdio with the official SDK) and a locally drawn computer-use capture produce the images; the
local OCR backend describes them in the text lane. Every provider payload and the JSONL trace
are written to an output folder, with the decision table as a picture and an audit report of
the trace.
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

from visiongate._demo_table import cut, terminal_width
from visiongate.adapters import RoutedResult, Router
from visiongate.adapters.mcp._session import BoundedSession, McpLimits, open_session
from visiongate.adapters.mcp.example_server import server_command
from visiongate.adapters.vision import VisionBackend, backend_from_config
from visiongate.engine import Gate

TEXT_MODE: Mapping[str, Any] = {"agent": {"image_input_mode": "text"}}
GIST = 60
"""Characters of what the model gets, in the summary (cut after a word)."""


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
    question: str = ""
    """What `vision_analyze` is asked about the image."""


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
    Scenario("browser", "vision model, browser screenshot", "anthropic",
             "claude-sonnet-4-5", "browser"),
    Scenario("vision-analyze", "text-only model, vision_analyze", "openrouter",
             "deepseek/deepseek-v3.2", "vision_analyze",
             question="which test failed, and why?"),
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


def page_png(width: int = 1280, height: int = 800) -> bytes:
    """A browser screenshot: an address bar and a page with a heading and a form."""
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 56), fill=(222, 225, 230))
    draw.rounded_rectangle((90, 12, width - 90, 44), radius=14, fill=(255, 255, 255))
    draw.text((110, 16), "https://shop.example/checkout", font=_font(20), fill=(60, 64, 67))
    draw.text((80, 100), "Checkout", font=_font(44), fill=(32, 33, 36))
    for row, label in enumerate(("Coupon code: WINTER10", "Subtotal: 100.00 EUR",
                                 "Discount: -19.00 EUR", "Total: 81.00 EUR")):  # fmt: skip
        draw.text((80, 190 + row * 60), label, font=_font(28), fill=(60, 64, 67))
    draw.rounded_rectangle((80, 460, 360, 520), radius=8, fill=(26, 115, 232))
    draw.text((120, 474), "Place order", font=_font(28), fill=(255, 255, 255))
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
        self.page = page_png()

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
            elif scenario.source == "vision_analyze":
                # The capture the computer-use scenario read: its description is cached.
                routed = await router.vision_analyze(
                    self.capture, scenario.question, provider=scenario.provider,
                    model=scenario.model,
                )  # fmt: skip
            else:
                image = self.page if scenario.source == "browser" else self.capture
                routed = await router.screenshot(
                    image, source=scenario.source, provider=scenario.provider,
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


@dataclass(frozen=True)
class Pictures:
    table: Path
    table_svg: Path
    report: Path


def write_pictures(out: Path) -> Pictures:
    """The decision table of the bundled policy (a page and its SVG grid) and an audit report
    of the demo's own trace, written under `out`."""
    from visiongate.engine import load_policy
    from visiongate.engine.tooling.audit._aggregate import aggregate
    from visiongate.engine.tooling.audit._inputs import expand
    from visiongate.engine.tooling.pictures import render_audit_report, render_table_picture

    compiled = load_policy("default")
    pictures = Pictures(
        out / "decision-table.html", out / "decision-table.svg", out / "audit-report.html"
    )
    pictures.table.write_text(render_table_picture(compiled, "html"), encoding="utf-8")
    pictures.table_svg.write_text(render_table_picture(compiled, "svg"), encoding="utf-8")
    result = aggregate(expand([str(out / "trace.jsonl")]))
    pictures.report.write_text(render_audit_report(result), encoding="utf-8")
    return pictures


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


SUMMARY_PROSE = (1, 7)
"""The summary's columns that wrap at words on a narrow terminal: scenario, what it gets."""


def summary_block(row: Sequence[str]) -> list[str]:
    """One scenario of the summary as lines, for a terminal too narrow for the table."""
    number, title, facts, lane, rule, images, size, gist = row
    sizes = f", {size}" if size != "-" else ""
    return [f"{number}. {title}", f"{lane} by {rule}, for {facts}", f"{images}{sizes}: {gist}"]


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
            return cut(f"vision unavailable: {note.reason}", GIST)
        cached = " (cached)" if note.description is not None and note.description.cached else ""
        return cut(f"OCR text{cached}: {_first_text_line(note.text)}", GIST)
    execution = record["execution"]
    refused = execution.get("refused", [])
    attached = execution.get("attached", [])
    if refused and not attached:
        return cut(str(refused[0].get("reason", "refused")), GIST)
    if refused:
        return f"pixels; {len(refused)} more as MEDIA: paths only"
    if routed.native:
        return "pixels, scale note, MEDIA: path"
    return "MEDIA: path only, no pixels"


def _first_text_line(text: str) -> str:
    """The first line the OCR read (`1 [top-left] Terminal - ...` gives `Terminal - ...`)."""
    for line in text.splitlines():
        number, _, rest = line.partition(" [")
        if number.isdigit() and "] " in rest:
            return rest.split("] ", 1)[1]
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
    """The first lines of what the model reads in one scenario, each cut at a word to fit
    the terminal."""
    outcome = next(o for o in outcomes if o.scenario.slug == slug)
    shown = outcome.routed.text.splitlines()[:lines]
    room = max(terminal_width() - 4, 20)
    return "\n".join(f"  | {cut(line, room)}" for line in shown)
