"""The little SVG the pictures need: escaped text and attributes, elements as strings.

Numbers are written with at most one decimal, so the same input gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import Final

SVG_NAMESPACE: Final = "http://www.w3.org/2000/svg"
FONT: Final = "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', Arial, sans-serif"
MONO: Final = "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace"

Attributes = Mapping[str, str | int | float | None]


def number(value: float) -> str:
    """`12`, `12.5`: no trailing zeros, one decimal at most."""
    rounded = round(value, 1)
    return str(int(rounded)) if rounded == int(rounded) else f"{rounded:.1f}"


def attributes(given: Attributes) -> str:
    parts = []
    for name, value in given.items():
        if value is None:
            continue
        shown = number(value) if isinstance(value, float | int) else value
        parts.append(f' {name}="{escape(str(shown), quote=True)}"')
    return "".join(parts)


def element(tag: str, given: Attributes, children: Iterable[str] = ()) -> str:
    inner = "".join(children)
    if not inner:
        return f"<{tag}{attributes(given)}/>"
    return f"<{tag}{attributes(given)}>{inner}</{tag}>"


def _named(given: Attributes) -> dict[str, str | int | float | None]:
    """Keyword names as attribute names: `font_size` -> `font-size`, `class_` -> `class`."""
    return {key.rstrip("_").replace("_", "-"): value for key, value in given.items()}


def text(x: float, y: float, content: str, **given: str | int | float | None) -> str:
    """A `<text>` element; keyword names use `_` for `-` (`font_size` -> `font-size`)."""
    named = {"x": x, "y": y, **_named(given)}
    return f"<text{attributes(named)}>{escape(content, quote=False)}</text>"


def title(content: str) -> str:
    """A tooltip and accessible name for the enclosing element."""
    return f"<title>{escape(content, quote=False)}</title>"


def rect(x: float, y: float, width: float, height: float, **given: str | int | float | None) -> str:
    named = {
        "x": x,
        "y": y,
        "width": width,
        "height": height,
        **_named(given),
    }
    return element("rect", named)


def group(children: Iterable[str], **given: str | int | float | None) -> str:
    named = _named(given)
    return element("g", named, children)


def document(
    width: float, height: float, label: str, children: Iterable[str], css_class: str
) -> str:
    """A standalone `<svg>` that scales to its container and names itself for screen readers."""
    head = (
        f'<svg xmlns="{SVG_NAMESPACE}"{attributes({"class": css_class})}'
        f"{attributes({'viewBox': f'0 0 {number(width)} {number(height)}'})}"
        f'{attributes({"width": width, "height": height})} role="img"'
        f"{attributes({'aria-label': label})}>"
    )
    return head + title(label) + "".join(children) + "</svg>"


def wrap_identifier(identifier: str, width: int) -> list[str]:
    """An identifier cut after `-` or `_` into lines of at most `width` characters (a part
    longer than that is cut where it must)."""
    lines: list[str] = []
    current = ""
    for part in _parts(identifier):
        if current and len(current) + len(part) > width:
            lines.append(current)
            current = ""
        while len(part) > width:
            lines.append(part[:width])
            part = part[width:]
        current += part
    if current:
        lines.append(current)
    return lines


def _parts(identifier: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for index, character in enumerate(identifier):
        if character in "-_":
            parts.append(identifier[start : index + 1])
            start = index + 1
    if start < len(identifier):
        parts.append(identifier[start:])
    return parts
