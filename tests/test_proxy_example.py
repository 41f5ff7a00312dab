"""`visiongate proxy` in front of the project's example server, through the official SDK client:
the vision route against the text-only route for the same server, descriptions, the policy
file watched while the session runs, one decision record per call (issue 19)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from _cli_helpers import validate_output
from _proxy_helpers import TEXT_ONLY, VISION, proxied, proxy_argv, read_trace
from _routing_helpers import DESCRIPTION, VisionEndpoint, aux_config
from _warm import server_command
from mcp.types import CallToolResult, ImageContent, TextContent

from visiongate.adapters.mcp import example_server

pytestmark = pytest.mark.anyio
POLICIES = Path(__file__).resolve().parent.parent / "policies"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def texts(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def media_lines(result: CallToolResult) -> int:
    return sum(line.startswith("MEDIA:") for line in texts(result).splitlines())


def images(result: CallToolResult) -> list[ImageContent]:
    return [block for block in result.content if isinstance(block, ImageContent)]


async def test_vision_route_gets_pixels_and_text_route_gets_paths(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    for target, name in ((VISION, "vision"), (TEXT_ONLY, "text")):
        # the example server's own command (not `_warm`'s stand-in): the record names it
        argv = proxy_argv(example_server.server_command(), "--trace", str(trace), target=target)
        async with proxied(argv, tmp_path) as session:
            shot = await session.call_tool("screenshot", {})
            gallery = await session.call_tool("gallery", {})
        if name == "vision":
            (image,) = images(shot)
            assert image.mime_type in ("image/jpeg", "image/png", "image/webp")
            assert "[image 1 attached: 1568x882" in texts(shot)
            assert len(images(gallery)) == 4  # the policy's max_images; the rest keep paths
        else:
            assert images(shot) == [] and images(gallery) == []
            assert "kept out of the conversation (text lane)" in texts(shot)
        assert media_lines(shot) == 1 and media_lines(gallery) == 6
    records = read_trace(trace)
    assert [r["lane"] for r in records] == ["native", "native", "text", "text"]
    for record in records:
        validate_output("decision-record", record)  # the library's schema, `proxy` included
        assert record["source"] == "mcp"
        assert record["proxy"]["server"].endswith("-m visiongate.adapters.mcp.example_server")
        assert record["proxy"]["transport"] == "stdio"
        assert record["proxy"]["latency_ms"] > 0
    assert [r["execution"]["tool_name"] for r in records] == ["screenshot", "gallery"] * 2
    assert [len(r["execution"]["attached"]) for r in records] == [1, 4, 0, 0]


async def test_text_lane_describes_when_the_policy_says_describe(
    tmp_path: Path, endpoint: VisionEndpoint
) -> None:
    policy = tmp_path / "describe.yaml"
    text = (POLICIES / "default.yaml").read_text()
    policy.write_text(text.replace("mcp: reference", "mcp: describe"))
    config = tmp_path / "agent.yaml"
    config.write_text(yaml.safe_dump(aux_config(endpoint.base_url)))
    options = ("--policy", str(policy), "--config", str(config))
    async with proxied(proxy_argv(server_command(), *options), tmp_path) as session:
        shot = await session.call_tool("screenshot", {})
    assert images(shot) == []
    body = texts(shot)
    assert body.index("[description of image 1") < body.index("MEDIA:")
    assert DESCRIPTION in body


async def test_embedded_image_resources_are_routed_like_images(tmp_path: Path) -> None:
    async with proxied(proxy_argv(server_command()), tmp_path) as session:
        result = await session.call_tool("embedded_image", {})
    assert len(images(result)) == 1
    assert "[image 1 attached:" in texts(result)
    assert all(block.type in ("text", "image") for block in result.content)


async def test_policy_edits_apply_to_the_next_call_and_a_broken_edit_keeps_the_last_good(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text((POLICIES / "default.yaml").read_text())
    trace = tmp_path / "trace.jsonl"
    argv = proxy_argv(server_command(), "--policy", str(policy), "--trace", str(trace))
    log = tmp_path / "proxy.log"  # the proxy's stderr: what it said of each policy check
    async with proxied(argv, tmp_path) as session:
        assert images(await session.call_tool("tile", {"number": 1})), log.read_text()
        _replace(policy, _no_pixels_for_auto((POLICIES / "default.yaml").read_text()))
        assert not images(await session.call_tool("tile", {"number": 2})), log.read_text()
        _replace(policy, "rules: [this is not a policy")
        assert not images(await session.call_tool("tile", {"number": 3})), log.read_text()
        assert not images(await session.call_tool("tile", {"number": 4})), log.read_text()
    records = read_trace(trace)
    assert [r["lane"] for r in records] == ["native", "text", "text", "text"]
    assert records[0]["policy"]["sha256"] != records[1]["policy"]["sha256"]
    assert records[1]["warnings"] == []
    for record in records[2:]:
        assert any("failed to load" in warning for warning in record["warnings"]), record


def _no_pixels_for_auto(text: str) -> str:
    """The default policy with its `auto-vision-model` rule sending text (invariants kept)."""
    rule = "when: {mode: auto, catalog: vision, aux: unset, path: accepts}\n    lane: native"
    assert rule in text
    return text.replace(rule, rule.replace("lane: native", "lane: text"))


def _replace(path: Path, text: str) -> None:
    """Write a new version atomically, as the README asks (renamed into place)."""
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
    # `reload` applies a renamed file once it is left alone for QUIET_SECONDS (0.05 s).
    os.utime(path, ns=(0, 0))
