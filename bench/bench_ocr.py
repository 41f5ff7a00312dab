"""Local OCR time per 1920x1080 screenshot full of text, against a blank one of the same size.

The blank screenshot is the baseline measured in the same run: it costs decoding and one
detection pass with nothing to recognise, so the ratio shows what the text itself costs.

    python bench/bench_ocr.py [--runs 5] [--save bench/results/screenshot.png]
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from visiongate.adapters.vision import LocalOCRBackend

SIZE = (1920, 1080)
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def font(name: str, size: int) -> Font:
    path = FONT_DIR / name
    return ImageFont.truetype(str(path), size) if path.exists() else ImageFont.load_default(size)


def screenshot() -> bytes:
    """An editor window: title, menu, file tree, code, a side panel and a status bar."""
    image = Image.new("RGB", SIZE, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    ui, mono = font("DejaVuSans.ttf", 16), font("DejaVuSansMono.ttf", 15)
    draw.rectangle((0, 0, 1920, 36), fill=(225, 225, 230))
    draw.text((760, 8), "invoice_service.py - billing - Visual Editor", font=ui, fill="black")
    menu = ["File", "Edit", "Selection", "View", "Go", "Run", "Terminal", "Help"]
    for index, item in enumerate(menu):
        draw.text((16 + 90 * index, 46), item, font=ui, fill="black")
    _sidebar(draw, ui)
    _code(draw, mono)
    _panel(draw, ui)
    draw.rectangle((0, 1050, 1920, 1080), fill=(0, 102, 184))
    status = "main*  Ln 42, Col 17  Spaces: 4  UTF-8  Python 3.11  2 problems"
    draw.text((16, 1056), status, font=ui, fill="white")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _sidebar(draw: ImageDraw.ImageDraw, ui: Font) -> None:
    draw.rectangle((0, 76, 300, 1050), fill=(240, 240, 244))
    names = ["EXPLORER", "billing", "  api", "    routes.py", "    schemas.py", "  services"]
    names += [f"    {name}.py" for name in ("invoice_service", "tax_rules", "currency", "ledger")]
    names += ["  tests", "    test_invoices.py", "    test_tax.py", "README.md", "pyproject.toml"]
    for index, name in enumerate(names):
        draw.text((16, 92 + 28 * index), name, font=ui, fill="black")


def _code(draw: ImageDraw.ImageDraw, mono: Font) -> None:
    lines = [
        "from decimal import Decimal",
        "from billing.services.tax_rules import rate_for",
        "",
        "class InvoiceService:",
        "    def total(self, invoice_id: int) -> Decimal:",
        "        invoice = self.repository.get(invoice_id)",
        "        subtotal = sum(line.amount for line in invoice.lines)",
        "        tax = subtotal * rate_for(invoice.country)",
        "        return (subtotal + tax).quantize(Decimal('0.01'))",
        "",
        "    def send(self, invoice_id: int, email: str) -> None:",
        "        pdf = self.renderer.render(invoice_id)",
        "        self.mailer.send(to=email, subject='Your invoice', attachment=pdf)",
    ]
    for index in range(42):
        text = lines[index % len(lines)]
        draw.text((320, 84 + 22 * index), f"{index + 1:>3}  {text}", font=mono, fill="black")


def _panel(draw: ImageDraw.ImageDraw, ui: Font) -> None:
    draw.rectangle((1480, 76, 1920, 1050), fill=(244, 244, 248))
    rows = ["PROBLEMS", "tax_rules.py: unused import 'Optional'", "ledger.py: line too long (104)"]
    rows += [
        "",
        "OUTLINE",
        "InvoiceService",
        "  total",
        "  send",
        "",
        "TIMELINE",
        "Saved 2 min ago",
    ]
    for index, row in enumerate(rows):
        draw.text((1496, 92 + 30 * index), row, font=ui, fill="black")


def blank() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", SIZE, (250, 250, 250)).save(buffer, "PNG")
    return buffer.getvalue()


def medians_ms(backend: LocalOCRBackend, image: bytes, runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time (all threads) per call, in milliseconds.

    CPU time is the steadier figure on a shared machine: other processes stretch the wall
    clock, not the work done.
    """
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        backend.describe(image, "image/png")
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--save", type=Path, help="write the generated screenshot here")
    args = parser.parse_args()
    image = screenshot()
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_bytes(image)
    backend = LocalOCRBackend()
    started = time.perf_counter()
    description = backend.describe(image, "image/png")
    first_ms = (time.perf_counter() - started) * 1000
    text_ms, text_cpu = medians_ms(backend, image, args.runs)
    blank_ms, blank_cpu = medians_ms(backend, blank(), args.runs)
    print(f"first call (loads the engine): {first_ms:.0f} ms")
    print(f"1920x1080 screenshot, median of {args.runs}: {text_ms:.0f} ms ({text_cpu:.0f} ms cpu)")
    print(f"1920x1080 blank baseline: {blank_ms:.0f} ms ({blank_cpu:.0f} ms cpu)")
    print(f"ratio text/blank: {text_ms / blank_ms:.1f}x; lines read: {description.lines}")
    print("first lines of the description:")
    for line in description.text.splitlines()[:12]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
