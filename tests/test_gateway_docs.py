"""README's "Run it for a team" against the gateway itself (issue 30): its command lines and its
Kubernetes arguments are accepted as written, its client configuration names the gateway's
headers, its nginx excerpt is the tested example's, and its metrics table lists exactly what
`/metrics` exports."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml
from _doc_blocks import README, Block, blocks

from visiongate.adapters.gateway._metrics import GatewayMetrics
from visiongate.adapters.gateway._options import (
    DEFAULT_DRAIN_S,
    DEFAULT_PATH,
    MODEL_HEADER,
    PROVIDER_HEADER,
)
from visiongate.cli import build_parser
from visiongate.cli.proxy import _command
from visiongate.cli.proxy._gateway import _forwarded, _token, listen_address

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "gateway" / "nginx.conf"


def _block(marker: str) -> Block:
    (found,) = [b for b in blocks(README) if b.marker == marker]
    return found


def _accepted(words: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The gateway's own checks of a command line, short of starting it."""
    monkeypatch.setenv("VG_TOKEN", "a" * 48)
    args = build_parser(only="proxy").parse_args(words)
    assert args.command == "proxy" and args.listen
    _command(args)
    host, _ = listen_address(args.listen)
    token = _token(args, host)
    _forwarded(args, token is not None)


def test_the_command_lines_are_accepted_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _block("ci:gateway-commands").text.replace("\\\n", " ")
    commands = [line for line in text.splitlines() if line.startswith("visiongate proxy")]
    assert len(commands) == 2
    for line in commands:
        _accepted(shlex.split(line)[1:], monkeypatch)


def test_the_kubernetes_example_runs_the_gateway_as_it_should(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manifest = yaml.safe_load(_block("ci:gateway-kubernetes").text)
    spec = manifest["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    _accepted([str(word) for word in container["args"]], monkeypatch)
    env = {item["name"]: item for item in container["env"]}
    assert env["VISIONGATE_REPLICA_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert "VG_TOKEN" in env and "--token-env" in container["args"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert spec["terminationGracePeriodSeconds"] > DEFAULT_DRAIN_S


def test_the_client_configuration_names_the_gateways_headers() -> None:
    config = json.loads(_block("ci:gateway-client").text)
    (server,) = config["mcpServers"].values()
    assert server["type"] == "http" and server["url"].endswith(DEFAULT_PATH)
    headers = {name.lower() for name in server["headers"]}
    assert {PROVIDER_HEADER, MODEL_HEADER, "authorization"} == headers


def _statements(text: str) -> set[str]:
    """nginx directives, whitespace collapsed, comments dropped."""
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    return {" ".join(s.split()) for s in re.split(r"[;{}]", code) if s.strip()}


def test_the_nginx_excerpt_is_the_tested_example() -> None:
    shown = _statements(_block("ci:gateway-nginx").text)
    assert shown <= _statements(EXAMPLE.read_text()), shown - _statements(EXAMPLE.read_text())
    assert len(shown) >= 20


def test_the_metrics_table_lists_what_is_exported() -> None:
    section = README.read_text().split("## Run it for a team", 1)[1]
    table = section.split("| metric |", 1)[1].split("\n\n", 1)[0]
    documented = {
        name
        for row in table.splitlines()[2:]
        for name in re.findall(r"`([a-z_*]+)`", row.split("|")[1])
    }
    exported = set()
    for family in GatewayMetrics().registry.collect():
        suffix = "_total" if family.type == "counter" else ""
        exported.add(family.name + suffix)
    process = {name for name in exported if name.startswith("process_")}
    assert documented - {"process_*"} == exported - process
    assert "process_*" in documented and process
