"""A fleet's decision trace for the audit report tests: real records, any number of them.

A few dozen real decisions (real gates, four agent configs, a dozen models, a route that
refuses images) are made once; the trace repeats them with new ids and times spread over
`days`, and with `execution` sections of the shape the adapters write (images found,
attached and refused with reasons, bytes before and after). Some records name an older
version of the bundled policy, so the audit finds them stale. Deterministic for a seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from visiongate.engine import SOURCES as ENGINE_SOURCES
from visiongate.engine import Gate
from visiongate.engine.facts import ModelCatalog

MODELS = (
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-haiku-4-5"),
    ("openai", "gpt-4o"),
    ("openai", "o3-mini"),
    ("openrouter", "deepseek/deepseek-v3.2"),
    ("openrouter", "anthropic/claude-sonnet-4.5"),
    ("gemini", "gemini-2.5-flash"),
    ("deepseek", "deepseek-chat"),
    ("anthropic", "claude-imaginary-9"),
)
CONFIGS: tuple[dict[str, Any], ...] = (
    {},
    {"agent": {"image_input_mode": "native"}},
    {"agent": {"image_input_mode": "text"}},
    {"auxiliary": {"vision": {"provider": "openrouter", "model": "google/gemini-3-flash"}}},
)
SOURCES = (*ENGINE_SOURCES, None)  # None: a record with no source (`decide`)
START = datetime(2026, 10, 1, tzinfo=UTC)
OLD_SHA = "0" * 64


def _templates() -> list[dict[str, Any]]:
    """Decided from the bundled catalog with no learned routes: never from what an earlier
    test in the same worker left in its facts cache or state folder."""
    templates = []
    catalog = ModelCatalog.bundled()
    for config in CONFIGS:
        gate = Gate.load(config=config, catalog=catalog, routes=False)
        templates += [gate.decide(p, m, trace=False).record() for p, m in MODELS]
        templates.append(gate.decide_facts("auto", "vision", "unset", "refuses").record())
    return templates


def _execution(lane: str, rng: random.Random) -> dict[str, Any]:
    found = rng.choice((1, 1, 1, 2, 6))
    before = rng.randrange(40_000, 900_000) * found
    if lane == "text":
        return {"action": "reference", "images_found": found, "attached": [], "refused": [],
                "bytes_before": before, "bytes_after": 0}  # fmt: skip
    attached = min(found, 4)
    refused = [{"index": index, "reason": "at most 4 images are attached per result"}
               for index in range(5, found + 1)]  # fmt: skip
    if rng.random() < 0.02:
        attached -= 1
        refused.append({"index": 1, "reason": "refused: png image is truncated or corrupt"})
    return {"action": "attach", "images_found": found,
            "attached": [{"index": i} for i in range(1, attached + 1)], "refused": refused,
            "bytes_before": before, "bytes_after": before * attached // found // 3}  # fmt: skip


def fleet_records(count: int, days: int = 14, seed: int = 3) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    templates = _templates()
    step = days * 86400 / max(count, 1)
    for number in range(count):
        record = dict(rng.choice(templates))
        record["decision_id"] = f"{seed:08x}{number // 100_000:08x}-{number:08d}"
        moment = START + timedelta(seconds=number * step + rng.uniform(0, step))
        record["timestamp"] = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        source = rng.choice(SOURCES)
        if source is not None:
            record["source"] = source
            record["execution"] = _execution(record["lane"], rng)
        if rng.random() < 0.05:
            record["policy"] = {**record["policy"], "sha256": OLD_SHA, "version": "1.9.0"}
        yield record


def write_fleet_trace(path: Path, count: int, days: int = 14, seed: int = 3) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for record in fleet_records(count, days, seed):
            out.write(json.dumps(record, separators=(",", ":")) + "\n")
        out.write("{this line is not json\n")
    return path
