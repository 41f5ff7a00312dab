"""What the router costs every process that routes (`proxy` after its first answer, the
gateway's sessions, `mcp call`, `route`, the demo): it imports no HTTP client until a vision
endpoint is configured and no schema validator until a tool declares an output schema. httpx
alone cost about 0.1 s of CPU a process (it imports its own command line and `rich`), and
jsonschema 60 ms; the suite starts a few hundred such processes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LOADS = """
import json, sys
from visiongate.adapters import Router
from visiongate.engine import Gate
router = Router(Gate.load(routes=False))
print(json.dumps(sorted(sys.modules)))
"""
LOADED_LATER = {"httpx", "jsonschema", "referencing"}


def loaded(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return {name.split(".")[0] for name in json.loads(done.stdout.splitlines()[-1])}


def test_a_router_with_no_vision_endpoint_loads_no_http_client_nor_validator() -> None:
    assert not loaded(LOADS) & LOADED_LATER


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "import os\n"
            "os.environ['OPENROUTER_API_KEY'] = 'sk-test'\n"
            "from visiongate.adapters.vision import backend_from_config\n"
            "backend_from_config({'auxiliary': {'vision': {'provider': 'openrouter', "
            "'model': 'google/gemini-3-flash'}}})\n",
            "httpx",
        ),
        (
            "from visiongate.adapters.sources._mcp_client import schema_check\n"
            "from visiongate.adapters.wire._wire import ToolResult\n"
            "schema_check({'type': 'object'}, {}, ToolResult(content=(), is_error=False))\n",
            "jsonschema",
        ),
    ],
    ids=["a vision endpoint", "a declared output schema"],
)
def test_each_loads_when_it_is_needed(code: str, expected: str) -> None:
    """The probe above would pass if the names were misspelt: here each one does load."""
    script = code + "import json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    assert expected in loaded(script)
