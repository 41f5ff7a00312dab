"""What `visiongate proxy` imports before its first answer (issue 37): the relay, the policy and
the sanitizer, and nothing of the image stage, OCR, HTTP client, schema validator or MCP SDK,
which load when a message needs them (or in the warm-up thread, after the first answer)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _proxy_helpers import INITIALIZE, INSTANT_SERVER

ROOT = Path(__file__).parent.parent
# The proxy, with its modules written down the moment its first answer has been sent (where
# the warm-up thread would start building the router).
PROBE = """
import json, sys
from visiongate.adapters.proxy import _serve

warm = _serve._warm_after_first_answer

async def snapshot(downstream, calls):
    await downstream.first_sent.wait()
    with open(sys.argv[1], "w") as out:
        json.dump(sorted(dict(sys.modules)), out)
    await warm(downstream, calls)

_serve._warm_after_first_answer = snapshot
from visiongate.cli import main
sys.exit(main(sys.argv[2:]))
"""
NOT_BEFORE_A_MESSAGE = {
    "PIL",
    "httpx",
    "jsonschema",
    "referencing",
    "mcp",
    "pydantic",
    "numpy",
    "cv2",
    "rapidocr",
    "onnxruntime",
    "cerberus",
    "uvicorn",
}


def modules_at_first_answer(tmp_path: Path, prelude: str = "") -> set[str]:
    """The modules imported when the first answer has been sent (`prelude`: code the probe
    runs first)."""
    snapshot = tmp_path / "modules.json"
    command = [
        *(sys.executable, "-c", prelude + PROBE, str(snapshot)),
        *("proxy", "--provider", "anthropic", "--model", "claude-sonnet-4-5"),
        *("--", sys.executable, "-c", INSTANT_SERVER),
    ]
    env = {"PATH": "/usr/bin:/bin", "VISIONGATE_POLICY_CACHE": str(tmp_path / "cache")}
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        proxy.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proxy.stdin.flush()
        answer = json.loads(proxy.stdout.readline())
        proxy.stdin.close()
        assert proxy.wait(timeout=60) == 0
    assert answer["result"]["serverInfo"]["name"] == "plain"
    return set(json.loads(snapshot.read_text()))


def test_the_proxy_answers_first_with_no_image_stage_ocr_http_client_validator_or_sdk(
    tmp_path: Path,
) -> None:
    """Regression (issue 37): the relay's modules imported the image stage, the auxiliary
    vision backends (httpx) and jsonschema before the proxy could answer `initialize`."""
    stages = (
        "visiongate.adapters.images",
        "visiongate.adapters.vision",
        "visiongate.adapters.mcp._sdk",
    )
    for warm in (False, True):  # the first start validates the policy, with cerberus
        modules = modules_at_first_answer(tmp_path)
        roots = {module.split(".")[0] for module in modules}
        forbidden = NOT_BEFORE_A_MESSAGE if warm else NOT_BEFORE_A_MESSAGE - {"cerberus"}
        assert not roots & forbidden, (warm, sorted(roots & forbidden))
        assert not {module for module in modules if module.startswith(stages)}


# What else waits for the first answer (issue 37, round seven): the tool-call modules, the
# sanitizer's character rules (an ASCII handshake needs none), `regex`, and the model catalog
# and provider registry, which resolving the target for its start-up warnings loads.
NOT_BEFORE_THE_FIRST_ANSWER = (
    "visiongate.adapters.proxy._calls",
    "visiongate.adapters.proxy._tools",
    "visiongate.adapters.proxy._view",
    "visiongate.adapters._routed",
    "visiongate.adapters.wire._text",
    "visiongate.adapters.sanitize._text",
    "visiongate.adapters.sanitize._invisible",
    "visiongate.engine.facts._tables",
    "regex",
)
VIOLATION = """
import visiongate.adapters.proxy._calls, visiongate.engine.facts._tables, regex
"""
"""Imported by the probe before the proxy starts: what the budget must then report."""


def over_budget(modules: set[str]) -> list[str]:
    roots = {module.split(".")[0] for module in modules}
    early = [name for name in NOT_BEFORE_THE_FIRST_ANSWER if name in modules or name in roots]
    return sorted({*early, *(roots & NOT_BEFORE_A_MESSAGE)})


def test_the_first_answer_waits_for_no_tool_call_module_character_table_or_catalog(
    tmp_path: Path,
) -> None:
    modules_at_first_answer(tmp_path)  # the policy's compile cache is warm from here on
    assert over_budget(modules_at_first_answer(tmp_path)) == []


def test_the_budget_reports_a_deliberate_violation(tmp_path: Path) -> None:
    modules_at_first_answer(tmp_path)
    reported = over_budget(modules_at_first_answer(tmp_path, VIOLATION))
    assert {"regex", "visiongate.adapters.proxy._calls", "visiongate.engine.facts._tables"} <= {
        *reported
    }
