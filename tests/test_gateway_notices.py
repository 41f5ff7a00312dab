"""The gateway says the operator's mistakes on stderr: the config's and its default target's
at start, a session's misspelt provider header when the session opens, once per target
(issue 35).

Regression: `X-Visiongate-Provider: openruter` kept the session's images out with nothing in
the gateway's log; the did-you-mean was only in the trace.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
from _gateway_helpers import gateway_argv, raw_initialize, running, wait_until
from _warm import server_command

MISSPELT = {"X-Visiongate-Provider": "openruter", "X-Visiongate-Model": "x-ai/grok-4"}
SAID = (
    "(openruter/x-ai/grok-4): warning: provider `openruter` is in neither providers.yaml nor "
    "the catalog, so its route refuses: did you mean `openrouter`?"
)


def test_a_session_naming_a_misspelt_provider_is_said_once(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "model:\n  default: claude-sonnet-4-5\n  provider: anthropic\n"
        "vision:\n  embed_taget_bytes: 1\n"
    )
    options = ["--listen", "127.0.0.1:0", "--config", str(config)]
    argv = gateway_argv(options, server_command(), target=())  # the config's main model
    with running(argv, tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        start = gateway.text()
        assert start.count("unknown key `embed_taget_bytes` under `vision` is ignored") == 1
        for _ in range(2):
            response, _session = raw_initialize(client, gateway.url, MISSPELT)
            assert response.status_code == 200
        assert wait_until(lambda: SAID in gateway.text())
        raw_initialize(client, gateway.url)  # the default target: said at start already
        assert wait_until(lambda: gateway.text().count(" opened for ") == 3)
    log = gateway.text()
    assert log.count(SAID) == 1, log
    assert log.count("embed_taget_bytes") == 1
    from _doc_blocks import operator_lines

    (shown,) = [line for line in operator_lines() if line.startswith("visiongate proxy: session")]
    assert shown.endswith(SAID.replace("x-ai/grok-4", "anthropic/claude-sonnet-4.5"))
    assert re.search(r"^visiongate proxy: session [0-9a-f]{12} \(openruter/", log, re.M)
