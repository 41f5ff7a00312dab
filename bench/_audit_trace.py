"""A realistic decision trace of a fleet, for `bench_audit.py`.

Every line is a real record: each one is decided by a real `Gate` (five policies, four agent
configs, thirteen provider/model pairs) and built by `Decision.record`, with an `execution`
section taken from a real `Router` run of the same source and lane (real PNG screenshots
through the image stage and the sanitizer; the text lane's descriptions come from a fixed
local backend so that no OCR model runs). What varies per record is what varies in a fleet:
the process that decided (64 id prefixes), the time (30 days), image hashes and sizes.
A handful of malformed lines are mixed in (text that is not JSON, a deeply nested array, a
record without facts, an unknown lane) and some strings hold U+2028, as server text can.
"""

from __future__ import annotations

import asyncio
import base64
import io
import random
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image, ImageDraw

from visiongate.adapters import Router
from visiongate.adapters.vision import Description
from visiongate.engine import Gate
from visiongate.engine._load import bundled_policy_text
from visiongate.engine.trace import encode_line, format_timestamp

GENERATOR_VERSION = 4
"""Bumped when the generated content changes, so a cached trace is rebuilt."""

MODELS: tuple[tuple[str, str, int], ...] = (
    ("anthropic", "claude-sonnet-4-5", 30),
    ("anthropic", "claude-haiku-4-5", 10),
    ("openai", "gpt-4o", 14),
    ("openai", "gpt-4.1-mini", 8),
    ("openai", "o3-mini", 4),
    ("openrouter", "deepseek/deepseek-v3.2", 6),
    ("openrouter", "anthropic/claude-sonnet-4.5", 6),
    ("gemini", "gemini-2.5-flash", 8),
    ("ollama", "llava:13b", 2),
    ("mistral", "pixtral-large-latest", 3),
    ("bedrock", "anthropic.claude-3-5-sonnet-20241022-v2:0", 4),
    ("xai", "grok-4", 2),
    ("deepseek", "deepseek-chat", 3),
)
SOURCES: tuple[tuple[str | None, int], ...] = (
    (None, 15),
    ("mcp", 45),
    ("computer_use", 20),
    ("browser", 15),
    ("vision_analyze", 5),
)
CONFIGS: dict[str, dict[str, Any]] = {
    "auto": {},
    "native": {"agent": {"image_input_mode": "native"}},
    "text": {"agent": {"image_input_mode": "text"}},
    "aux": {"auxiliary": {"vision": {"provider": "openrouter", "model": "google/gemini-3-flash"}}},
}
START = 1790812800.0  # 2026-10-01T00:00:00Z
DAYS = 30


class _FixedBackend:
    """A local auxiliary backend with a fixed answer, so the text lane runs without OCR."""

    name = "bench-fixed"

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        return Description(
            "a settings dialog with two buttons, `Cancel` and `Save`", self.name, False, 3.0
        )


def _screenshot(width: int, height: int, seed: int) -> bytes:
    image = Image.new("RGB", (width, height), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    rng = random.Random(seed)
    for _ in range(40):
        x, y = rng.randrange(width - 200), rng.randrange(height - 40)
        draw.rectangle((x, y, x + 180, y + 30), fill=(rng.randrange(256), 90, 160))
        draw.text((x + 8, y + 8), f"button {rng.randrange(1000)}", fill=(0, 0, 0))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@dataclass(frozen=True)
class _Fleet:
    gates: tuple[tuple[Gate, int], ...]
    templates: dict[tuple[str, str], dict[str, Any]]


def _policies(folder: Path) -> list[tuple[str | Path | None, int]]:
    """Bundled policies, and a policy file whose decisions become stale: a first version
    decides part of the trace, then the file is changed and a second version decides."""
    fleet = folder / "fleet.yaml"
    text = bundled_policy_text("default").replace("policy: default", "policy: fleet")
    fleet.write_text(text, encoding="utf-8")
    return [
        (None, 50),
        ("examples/never-pixels", 8),
        ("examples/trust-unknown-aliases", 8),
        ("examples/describe-mcp", 8),
        (fleet, 13),
    ]


def _fleet(folder: Path, cache: Path) -> _Fleet:
    gates: list[tuple[Gate, int]] = []
    for policy, weight in _policies(folder):
        for name, config in CONFIGS.items():
            share = {"auto": 6, "native": 2, "text": 1, "aux": 1}[name]
            gates.append((Gate.load(policy, config=config), weight * share))
    fleet = folder / "fleet.yaml"
    text = fleet.read_text(encoding="utf-8")
    revised = re.sub(r'version: "(\d+)\.(\d+)\.\d+"', _next_minor, text, count=1)
    fleet.write_text(revised + "# revised for the fleet\n", encoding="utf-8")
    # The first version's decisions are now stale.
    gates += [(Gate.load(fleet, config=CONFIGS["auto"]), 40)]
    return _Fleet(tuple(gates), _templates(cache))


def _next_minor(match: re.Match[str]) -> str:
    return f'version: "{match[1]}.{int(match[2]) + 1}.0"'


def _templates(folder: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Execution and sanitizer sections of real routed results, by (source, lane)."""
    shots = [_screenshot(1280, 720, 1), _screenshot(1920, 1080, 2)]
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for mode in ("native", "text"):
        gate = Gate.load(config=CONFIGS[mode])
        router = Router(gate, cache=folder / "cache", vision=_FixedBackend())
        for source in ("mcp", "computer_use", "browser", "vision_analyze"):
            record = asyncio.run(_route(router, source, shots))
            found[(source, record["lane"])] = {
                "execution": record.get("execution", {}),
                "sanitizer": record.get("sanitizer", {}),
            }
    return found


async def _route(router: Router, source: str, shots: list[bytes]) -> dict[str, Any]:
    where = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
    if source == "mcp":
        blocks: list[Any] = [
            ImageContent(type="image", data=base64.b64encode(s).decode(), mime_type="image/png")
            for s in shots
        ]
        text = "captured\u2028both windows \U000e0041\U000e0042"  # a separator, TAG characters
        blocks.append(TextContent(type="text", text=text))
        routed = await router.mcp(CallToolResult(content=blocks), tool_name="screenshot", **where)
    elif source == "vision_analyze":
        routed = await router.vision_analyze(shots[0], "what does the dialog say?", **where)
    else:
        routed = await router.screenshot(shots[1], source=source, text="done", **where)
    return dict(routed.record)


def _vary(template: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    execution = dict(template["execution"])
    scale = rng.uniform(0.3, 3.0)
    for key in ("bytes_before", "bytes_after"):
        if isinstance(execution.get(key), int):
            execution[key] = int(execution[key] * scale)
    attached = execution.get("attached")
    if isinstance(attached, list):
        execution["attached"] = [
            {**image, "sha256": f"{rng.getrandbits(256):064x}"} for image in attached
        ]
    return execution


def records(count: int, folder: Path, seed: int = 7) -> Iterator[dict[str, Any]]:
    """`count` realistic records, in time order; `folder` keeps the policy file they name."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as cache:
        fleet = _fleet(folder, Path(cache))
        gates = [gate for gate, _ in fleet.gates]
        gate_weights = [weight for _, weight in fleet.gates]
        models = [(p, m) for p, m, _ in MODELS]
        model_weights = [w for _, _, w in MODELS]
        sources = [s for s, _ in SOURCES]
        source_weights = [w for _, w in SOURCES]
        prefixes = [f"{rng.getrandbits(64):016x}" for _ in range(64)]
        counters = [0] * len(prefixes)
        step = DAYS * 86400 / count
        for number in range(count):
            gate = rng.choices(gates, gate_weights)[0]
            provider, model = rng.choices(models, model_weights)[0]
            source = rng.choices(sources, source_weights)[0]
            decision = gate.decide(provider, model, trace=False)
            if source is None:
                record = decision.record()
            else:
                template = fleet.templates[(source, decision.lane)]
                record = decision.record(
                    source=source, execution=_vary(template, rng), sanitizer=template["sanitizer"]
                )
            process = rng.randrange(len(prefixes))
            counters[process] += 1
            record["decision_id"] = f"{prefixes[process]}-{counters[process]:08d}"
            moment = START + number * step + rng.uniform(0, step)
            record["timestamp"] = format_timestamp(moment)
            yield record


MALFORMED = (
    b"{this is not json\n",
    b"[" * 100_000 + b"]" * 100_000 + b"\n",
    b'{"schema_version": 1, "decision_id": "x", "lane": "native"}\n',
    b'{"schema_version":1,"decision_id":"y","timestamp":"2026-10-02T00:00:00Z",'
    b'"lane":"sideways","facts":{},"policy":{}}\n',
    b"\x00\x01 binary noise\n",
)


def write_trace(path: Path, count: int) -> None:
    """Write the trace: `count` records and, spread through it, the malformed lines."""
    every = max(1, count // (len(MALFORMED) + 1))
    with path.open("wb", buffering=1 << 20) as out:
        for number, record in enumerate(records(count, path.parent), start=1):
            out.write(encode_line(record))
            if number % every == 0 and number // every <= len(MALFORMED):
                out.write(MALFORMED[number // every - 1])


if __name__ == "__main__":
    write_trace(Path(sys.argv[1]), int(sys.argv[2]))
