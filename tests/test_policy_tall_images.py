"""`execution.native.tall_images` and `legibility_scale`: read, per source, and checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from visiongate.engine import analyze_policy_text

BASE = (Path(__file__).resolve().parent.parent / "policies" / "default.yaml").read_text()
NATIVE_KEYS = "    max_edge_px: 1568        # long edge ceiling in pixels\n"


def with_native(lines: str) -> str:
    assert NATIVE_KEYS in BASE
    return BASE.replace(NATIVE_KEYS, NATIVE_KEYS + lines, 1)


def test_defaults_tile_below_the_measured_legibility_scale() -> None:
    compiled, diagnostics = analyze_policy_text(BASE, "default.yaml")
    assert compiled is not None and diagnostics == []
    native = compiled.policy.execution.native
    assert (native.tall_images, native.legibility_scale) == ("tile", 0.9)


def test_the_keys_are_read_and_a_source_may_override_them() -> None:
    text = with_native(
        "    tall_images: shrink\n"
        "    legibility_scale: 0.75\n"
        "    sources:\n"
        "      browser: {tall_images: tile, legibility_scale: 1}\n"
    )
    compiled, diagnostics = analyze_policy_text(text, "p.yaml")
    assert compiled is not None, [d.render() for d in diagnostics]
    execution = compiled.policy.execution
    assert (execution.native.tall_images, execution.native.legibility_scale) == ("shrink", 0.75)
    browser = execution.native_for("browser")
    assert (browser.tall_images, browser.legibility_scale) == ("tile", 1.0)
    assert execution.native_for("mcp").tall_images == "shrink"


@pytest.mark.parametrize(
    ("line", "code", "help_text"),
    [
        ("    tall_images: tiles\n", "unknown-value", "did you mean `tile`?"),
        ("    tall_image: tile\n", "unknown-key", "did you mean `tall_images`?"),
        ("    legibility_scale: 0\n", "out-of-range", ""),
        ("    legibility_scale: 1.5\n", "out-of-range", ""),
    ],
)
def test_a_wrong_value_or_key_is_a_diagnostic_with_help(
    line: str, code: str, help_text: str
) -> None:
    compiled, diagnostics = analyze_policy_text(with_native(line), "p.yaml")
    assert compiled is None
    (found,) = [d for d in diagnostics if d.code == code]
    assert found.location.line == BASE[: BASE.index(NATIVE_KEYS)].count("\n") + 2
    assert help_text in found.help
