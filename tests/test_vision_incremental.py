"""Incremental OCR of consecutive screenshots, on small real screenshots drawn with Pillow.

Every read goes through the real models; a recording reader counts what the detector was
shown, so a test can tell a full read from an incremental one by the pixels looked at.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from _routing_helpers import make_router
from PIL import Image, ImageDraw, ImageFont

from visiongate.adapters.vision import LocalOCRBackend, OcrSettings, ScreenMemory
from visiongate.adapters.vision._engine import Pixels, Quad, RapidReader

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
SIZE = (640, 400)
LINES = [
    "Deploy finished for invoice service",
    "Build 412 passed all checks",
    "Queue holds seven pending jobs",
    "Cache hit rate was ninety percent",
    "Review requested by the billing team",
    "Backup completed at nine fifteen",
    "Disk usage is below the warning level",
    "Two alerts were closed this morning",
    "Release notes were sent to customers",
    "Nightly report is ready to download",
    "Token rotation is scheduled for Monday",
    "Support inbox has three new messages",
    "Search index was rebuilt overnight",
    "Latency stayed under forty milliseconds",
]


def font(size: int = 20) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.truetype(str(FONT), size) if FONT.exists() else ImageFont.load_default(size)


def page(
    first: int,
    count: int,
    size: tuple[int, int] = SIZE,
    title: str = "Status",
    lines: Sequence[str] = LINES,
) -> bytes:
    """A window: a fixed title and `count` of `lines` from `first`, 30 px apart."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, size[0], 36), fill=(225, 228, 235))
    draw.text((14, 8), title, font=font(), fill="black")
    for row, text in enumerate(lines[first : first + count]):
        draw.text((20, 52 + 30 * row), text, font=font(), fill=(30, 30, 30))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@dataclass
class RecordingReader:
    """The real models, noting how many pixels each detection pass was shown."""

    inner: RapidReader
    detected: list[int] = field(default_factory=list)

    def detect(self, image: Pixels, scale: float) -> list[Quad]:
        self.detected.append(int(image.shape[0] * image.shape[1]))
        return self.inner.detect(image, scale)

    def recognise(self, crops: Sequence[Pixels]) -> list[tuple[str, float]]:
        return self.inner.recognise(crops)

    def looked_at(self) -> int:
        seen = sum(self.detected)
        self.detected.clear()
        return seen


@pytest.fixture(scope="module")
def reader() -> RecordingReader:
    return RecordingReader(RapidReader(OcrSettings()))


@pytest.fixture
def ocr(reader: RecordingReader) -> LocalOCRBackend:
    reader.detected.clear()
    return LocalOCRBackend(OcrSettings(), reader_factory=lambda _settings: reader)


def body(text: str) -> list[str]:
    """The numbered lines of a description, without the header and the change note."""
    return [line for line in text.splitlines() if re.match(r"\d+ \[", line)]


def test_identical_screenshot_is_not_read_again(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    memory = ScreenMemory()
    first = ocr.describe_screen(page(0, 4), "image/png", memory=memory, stream="computer_use")
    assert first.reading == "full" and reader.looked_at() > 0
    again = ocr.describe_screen(page(0, 4), "image/png", memory=memory, stream="computer_use")
    assert again.reading == "repeat" and again.cached
    assert reader.looked_at() == 0
    assert body(again.text) == body(first.text)
    assert "same text as the previous screenshot of this source" in again.text


def test_same_pixels_in_other_bytes_are_not_read_again(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    memory = ScreenMemory()
    ocr.describe_screen(page(0, 4), "image/png", memory=memory, stream="browser")
    reader.looked_at()
    buffer = io.BytesIO()
    Image.open(io.BytesIO(page(0, 4))).save(buffer, "PNG", compress_level=1)
    again = ocr.describe_screen(buffer.getvalue(), "image/png", memory=memory, stream="browser")
    assert again.reading == "repeat"
    assert reader.looked_at() == 0


def test_a_new_line_reads_only_its_region_and_matches_a_full_read(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    memory = ScreenMemory()
    ocr.describe_screen(page(0, 5), "image/png", memory=memory, stream="computer_use")
    full_pixels = reader.looked_at()
    changed = ocr.describe_screen(page(0, 6), "image/png", memory=memory, stream="computer_use")
    assert changed.reading == "incremental"
    assert reader.looked_at() < 0.4 * full_pixels
    assert body(changed.text) == body(ocr.describe(page(0, 6), "image/png").text)
    assert body(changed.text)[-1] == "7 [middle-left] Backup completed at nine fifteen"
    assert "changed since the previous screenshot of this source: line 7 (1 of 7 lines)" in (
        changed.text
    )


def test_a_changed_line_in_the_middle_is_read_again(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    memory = ScreenMemory()
    ocr.describe_screen(page(0, 5), "image/png", memory=memory, stream="computer_use")
    full_pixels = reader.looked_at()
    image = Image.open(io.BytesIO(page(0, 5)))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 112, SIZE[0], 140), fill="white")
    draw.text((20, 112), "Queue holds no pending jobs", font=font(), fill=(30, 30, 30))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    changed = ocr.describe_screen(
        buffer.getvalue(), "image/png", memory=memory, stream="computer_use"
    )
    assert changed.reading == "incremental"
    assert reader.looked_at() < 0.4 * full_pixels
    assert "4 [top-left] Queue holds no pending jobs" in body(changed.text)
    assert "seven" not in changed.text
    assert "changed since the previous screenshot of this source: line 4 (1 of 6 lines)" in (
        changed.text
    )


def test_a_scroll_moves_the_kept_lines_and_reads_what_came_in(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    memory = ScreenMemory()
    ocr.describe_screen(page(0, 11), "image/png", memory=memory, stream="browser")
    full_pixels = reader.looked_at()
    scrolled = ocr.describe_screen(page(2, 11), "image/png", memory=memory, stream="browser")
    assert scrolled.reading == "incremental"
    assert reader.looked_at() < 0.6 * full_pixels
    assert body(scrolled.text) == body(ocr.describe(page(2, 11), "image/png").text)
    note = scrolled.text.splitlines()[1]
    assert note.startswith("the view scrolled down by 60 px; changed since the previous")
    assert "lines 11–12 (2 of 12 lines); 2 lines of it no longer shown" in note


def test_a_repeated_line_that_stays_and_also_scrolls_is_kept_twice(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    # `$ make test` is at row 3 before and after a two-row scroll, and its copy from row 3
    # also lands on row 1: each old line must be carried to every place it shows.
    prompt = "$ make test"
    lines = [*LINES[:3], prompt, LINES[3], prompt, *LINES[4:11]]
    memory = ScreenMemory()
    ocr.describe_screen(page(0, 11, lines=lines), "image/png", memory=memory, stream="cu")
    reader.looked_at()
    scrolled = ocr.describe_screen(
        page(2, 11, lines=lines), "image/png", memory=memory, stream="cu"
    )
    assert scrolled.reading == "incremental"
    texts = [line.split("] ", 1)[1] for line in body(scrolled.text)]
    assert texts == ["Status", *lines[2:13]]
    assert texts.count(prompt) == 2


def test_a_resolution_change_falls_back_to_a_full_read(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    memory = ScreenMemory()
    ocr.describe_screen(page(0, 4), "image/png", memory=memory, stream="computer_use")
    reader.looked_at()
    wider = ocr.describe_screen(
        page(0, 4, size=(720, 400)), "image/png", memory=memory, stream="computer_use"
    )
    assert wider.reading == "full"
    assert reader.looked_at() >= 720 * 400
    assert "previous screenshot" not in wider.text
    assert body(wider.text)[1] == "2 [top-left] Deploy finished for invoice service"
    assert wider.text.startswith("720x400 image, text read by local OCR: 5 lines")


def test_two_interleaved_sources_are_never_mixed(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    memory = ScreenMemory()
    terminal, browser = page(0, 4, title="Terminal"), page(6, 4, title="Browser")
    ocr.describe_screen(terminal, "image/png", memory=memory, stream="computer_use")
    ocr.describe_screen(browser, "image/png", memory=memory, stream="browser")
    reader.looked_at()
    grown = ocr.describe_screen(
        page(0, 5, title="Terminal"), "image/png", memory=memory, stream="computer_use"
    )
    assert grown.reading == "incremental"
    assert "Browser" not in grown.text and "Backup" not in grown.text
    assert "line 6 (1 of 6 lines)" in grown.text
    same = ocr.describe_screen(browser, "image/png", memory=memory, stream="browser")
    assert same.reading == "repeat"
    assert "same text as the previous screenshot of this source" in same.text
    assert "Terminal" not in same.text and "Deploy" not in same.text


def test_the_router_keeps_screens_per_source(tmp_path: Path, ocr: LocalOCRBackend) -> None:
    router = make_router(tmp_path, {"agent": {"image_input_mode": "text"}}, vision=ocr)
    target = {"provider": "anthropic", "model": "claude-sonnet-4-5"}

    def shot(image: bytes, source: str) -> str:
        routed = asyncio.run(router.screenshot(image, source=source, **target))
        assert routed.lane == "text" and routed.images == ()
        return routed.text

    terminal, browser = page(0, 4, title="Terminal"), page(6, 4, title="Browser")
    assert "previous screenshot" not in shot(terminal, "computer_use")
    assert "previous screenshot" not in shot(browser, "browser")
    grown = shot(page(0, 5, title="Terminal"), "computer_use")
    assert "changed since the previous screenshot of this source: line 6" in grown
    assert "same text as the previous screenshot" in shot(browser, "browser")
    other = make_router(tmp_path, {"agent": {"image_input_mode": "text"}}, vision=ocr)
    fresh = asyncio.run(other.screenshot(browser, source="browser", **target)).text
    assert "previous screenshot" not in fresh  # one router's memory is its own


def test_incremental_off_reads_in_full_but_still_notes_changes(reader: RecordingReader) -> None:
    settings = OcrSettings(incremental=False)
    ocr = LocalOCRBackend(settings, reader_factory=lambda _settings: reader)
    memory = ScreenMemory()
    ocr.describe_screen(page(0, 4), "image/png", memory=memory, stream="computer_use")
    again = ocr.describe_screen(page(0, 4), "image/png", memory=memory, stream="computer_use")
    assert again.reading == "full"
    assert "same text as the previous screenshot" in again.text


def test_the_same_bytes_are_read_once_whoever_asks(
    ocr: LocalOCRBackend, reader: RecordingReader
) -> None:
    """The demo read one capture three times (a computer-use stream, another router's stream,
    `vision_analyze` with a question): 2.3 s of OCR each. The boxes of what a backend read
    are kept by content hash, so only the first one reads; the question is still answered."""
    image = page(0, 4)
    first = ocr.describe_screen(image, "image/png", memory=ScreenMemory(), stream="computer_use")
    assert first.reading == "full" and reader.looked_at() > 0
    other = ocr.describe_screen(image, "image/png", memory=ScreenMemory(), stream="computer_use")
    asked = ocr.describe(image, "image/png", question="what does the first row say?")
    assert reader.looked_at() == 0
    assert other.reading == asked.reading == "repeat" and other.cached and asked.cached
    assert asked.text.endswith(first.text.split("\n", 1)[1])  # the same lines read
    assert "what does the first row say?" in asked.text


def test_with_incremental_off_the_same_bytes_are_read_again(reader: RecordingReader) -> None:
    ocr = LocalOCRBackend(OcrSettings(incremental=False), reader_factory=lambda _settings: reader)
    reader.detected.clear()
    ocr.describe(page(0, 4), "image/png")
    ocr.describe(page(0, 4), "image/png")
    assert len(reader.detected) == 2
