"""The import budget of `visiongate proxy --listen` (issue 40): when it says `listening on`, and
when its first session's `initialize` has been answered, it has imported neither the MCP SDK
(nor pydantic), the image stage, OCR, an HTTP client nor a schema validator. The gateway
speaks Streamable HTTP itself (`adapters/gateway/_transport.py`); the router stack loads in the
warm-up thread after the first answer, and the vision backends when a router asks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx2
from _gateway_helpers import gateway_argv, raw_initialize, running, wait_until
from _proxy_helpers import INSTANT_SERVER

# The gateway, with its modules written down as it says `listening on` and the moment its first
# answer has gone to the relay's client side (where the warm-up thread would start).
PROBE = """
import json, sys
from visiongate.adapters.gateway import _serve as gateway_serve
from visiongate.adapters.proxy import _serve

def written(name):
    with open(sys.argv[1] + "." + name, "w") as out:
        json.dump(sorted(dict(sys.modules)), out)

said = gateway_serve.log
def log(text):
    if text.startswith("listening on"):
        written("listening")
    said(text)
gateway_serve.log = log

warm = _serve._warm_after_first_answer
async def snapshot(downstream, calls):
    await downstream.first_sent.wait()
    written("answered")
    await warm(downstream, calls)
_serve._warm_after_first_answer = snapshot

from visiongate.cli import main
sys.exit(main(sys.argv[2:]))
"""
NOT_BEFORE_A_SESSION = {
    "mcp",
    "mcp_types",
    "pydantic",
    "pydantic_core",
    "sse_starlette",
    "PIL",
    "httpx",
    "rich",
    "jsonschema",
    "referencing",
    "numpy",
    "cv2",
    "rapidocr",
    "onnxruntime",
}
"""Not cerberus: the policy cache of a test's fresh home is cold, and a cold compile validates
the policy with it, as every first run of the engine does."""


def _tops(path: Path) -> set[str]:
    return {name.split(".", 1)[0] for name in json.loads(path.read_text())}


def test_listening_and_the_first_answer_import_no_sdk_image_stage_or_http_client(
    tmp_path: Path,
) -> None:
    snapshot = tmp_path / "modules"
    argv = gateway_argv(["--listen", "127.0.0.1:0"], [sys.executable, "-c", INSTANT_SERVER])
    argv = [sys.executable, "-c", PROBE, str(snapshot), *argv[3:]]  # the probe runs the CLI
    with running(argv, tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        response, session_id = raw_initialize(client, gateway.url)
        assert response.status_code == 200 and session_id, response.text
        assert wait_until(lambda: Path(f"{snapshot}.answered").exists())
    for moment in ("listening", "answered"):
        imported = _tops(Path(f"{snapshot}.{moment}")) & NOT_BEFORE_A_SESSION
        assert not imported, f"imported by the time it was {moment}: {sorted(imported)}"
