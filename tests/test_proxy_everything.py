"""`visiongate proxy` in front of the reference server `@modelcontextprotocol/server-everything`
(pinned in tests/npm), through the official SDK client: every tool it lists for this client,
every resource, template and prompt, completions, logging, subscriptions, progress, and the
server-to-client requests (sampling, elicitation, roots) answered by the client through the
proxy; tasks through a raw client (the SDK client does not augment calls with tasks)."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from _proxy_helpers import RawClient, eventually, everything_command, proxied, read_trace
from _proxy_helpers import warm_proxy_argv as proxy_argv
from mcp import ClientSession
from mcp.types import (
    CallToolResult,
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    PromptReference,
    ResourceUpdatedNotification,
    Root,
    TextContent,
)

pytestmark = pytest.mark.anyio
GZIP_DATA = "data:text/plain;base64," + base64.b64encode(b"hello through the proxy").decode()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("everything")


class Client:
    """The client side's answers to the server, and what it was sent."""

    def __init__(self) -> None:
        self.logs: list[Any] = []
        self.updates: list[str] = []
        self.progress: list[float] = []

    async def sample(self, context: Any, params: Any) -> CreateMessageResult:
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="sampled-by-the-client"),
            model="test-model",
        )

    async def elicit(self, context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self, context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///tmp/project", name="the-project")])

    async def log(self, params: Any) -> None:
        self.logs.append(params)

    async def message(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.updates.append(str(message.params.uri))

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(progress)


@pytest.fixture(scope="module")
def client() -> Client:
    return Client()


@pytest.fixture(scope="module")
async def session(anyio_backend: str, home: Path, client: Client) -> AsyncIterator[ClientSession]:
    argv = proxy_argv(everything_command(), "--trace", str(home / "trace.jsonl"))
    async with proxied(
        argv,
        home,
        sampling_callback=client.sample,
        elicitation_callback=client.elicit,
        list_roots_callback=client.roots,
        logging_callback=client.log,
        message_handler=client.message,
    ) as connected:
        yield connected


def text(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


# tool -> (arguments, what the client must get)
TOOLS: dict[str, tuple[dict[str, Any], Callable[[CallToolResult], bool]]] = {
    "echo": ({"message": "hello"}, lambda r: "Echo: hello" in text(r)),
    "get-annotated-message": (
        {"messageType": "success", "includeImage": True},
        lambda r: [b.type for b in r.content] == ["text", "text", "image"] and not r.is_error,
    ),
    "get-env": ({}, lambda r: "PATH" in text(r)),
    "get-resource-links": ({"count": 3}, lambda r: text(r).count("[resource link:") == 3),
    "get-resource-reference": (
        {"resourceType": "Text", "resourceId": 1},
        lambda r: "[resource <demo://resource/dynamic/text/1>]" in text(r),
    ),
    "get-structured-content": (
        {"location": "Chicago"},
        lambda r: isinstance(r.structured_content, dict) and "temperature" in r.structured_content,
    ),
    "get-sum": ({"a": 2, "b": 3}, lambda r: "5" in text(r)),
    "get-tiny-image": (
        {},
        lambda r: (
            [b.type for b in r.content] == ["text", "image"] and "[image 1 attached" in text(r)
        ),
    ),
    "gzip-file-as-resource": (
        {"name": "hello.gz", "data": GZIP_DATA},
        lambda r: "[resource link: hello.gz <demo://resource/session/hello.gz>" in text(r),
    ),
    "get-roots-list": ({}, lambda r: "the-project" in text(r) and "file:///tmp/project" in text(r)),
    "trigger-elicitation-request": ({}, lambda r: "Ada" in text(r)),
    "trigger-sampling-request": (
        {"prompt": "hi", "maxTokens": 10},
        lambda r: "sampled-by-the-client" in text(r),
    ),
    # Tested on their own below: they start or need what the other calls do not.
    "toggle-simulated-logging": ({}, lambda r: not r.is_error),
    "toggle-subscriber-updates": ({}, lambda r: not r.is_error),
    "trigger-long-running-operation": ({"duration": 1, "steps": 2}, lambda r: not r.is_error),
    "trigger-url-elicitation": ({"url": "https://example.com/consent"}, lambda r: True),
    "simulate-research-query": ({"topic": "cats"}, lambda r: True),
    # The proxy's own tool, listed last: a path it did not show the model is refused.
    "visiongate_view_image": (
        {"path": "MEDIA:/etc/passwd"},
        lambda r: r.is_error and "is not an image this proxy showed you" in text(r),
    ),
}


async def test_every_listed_tool_is_covered(session: ClientSession) -> None:
    listed = {tool.name for tool in (await session.list_tools()).tools}
    assert listed == set(TOOLS), listed ^ set(TOOLS)


@pytest.mark.parametrize(
    "name",
    [
        name
        for name in TOOLS
        if not name.startswith(("toggle", "trigger-long", "trigger-url", "simulate"))
    ],
)
async def test_each_tool_through_the_proxy(session: ClientSession, name: str) -> None:
    arguments, expected = TOOLS[name]
    result = await session.call_tool(name, arguments)
    assert expected(result), result
    assert all(block.type in ("text", "image") for block in result.content)


async def test_user_only_content_reaches_the_client_with_its_annotations(
    session: ClientSession, home: Path
) -> None:
    """Issue 23: the client got a `MEDIA:` path and two notes, the annotations gone, so it had
    nothing to show its user, and the model was handed the path of an image meant for the
    user only. The client gets the blocks for the user as they came, annotations intact; the
    model's text block keeps what its parts' annotations said, and names no user-only path."""
    result = await session.call_tool(
        "get-annotated-message", {"messageType": "error", "includeImage": True}
    )
    model, user_image = result.content
    assert model.type == "text" and user_image.type == "image"
    assert model.text.startswith("Error: Operation failed\n[1 part(s) of this result are for")
    assert "MEDIA:" not in model.text
    assert model.annotations is not None and model.annotations.priority == 1.0
    assert model.annotations.audience == ["user", "assistant"]
    assert user_image.annotations is not None and user_image.annotations.audience == ["user"]
    assert user_image.annotations.priority == 0.5 and user_image.mime_type == "image/png"
    success = await session.call_tool(
        "get-annotated-message", {"messageType": "success", "includeImage": False}
    )
    note, for_user = success.content
    assert "Operation completed" not in note.text and note.annotations is None
    assert for_user.text == "Operation completed successfully"
    assert for_user.annotations is not None and for_user.annotations.audience == ["user"]
    records = [r for r in read_trace(home / "trace.jsonl") if r["execution"].get("user_only")]
    assert records[-2]["execution"]["media_paths"] == []
    assert len(records[-2]["execution"]["user_media_paths"]) == 1


async def test_progress_of_a_long_operation_reaches_the_client(
    session: ClientSession, client: Client
) -> None:
    arguments = TOOLS["trigger-long-running-operation"][0]
    result = await session.call_tool(
        "trigger-long-running-operation", arguments, progress_callback=client.on_progress
    )
    assert not result.is_error and client.progress == [1, 2]


async def test_logging_level_and_simulated_logs(session: ClientSession, client: Client) -> None:
    await session.set_logging_level("debug")
    await session.call_tool("toggle-simulated-logging", {})
    await eventually(lambda: len(client.logs) >= 2)
    await session.call_tool("toggle-simulated-logging", {})
    assert all(log.level for log in client.logs)


async def test_subscriptions_and_update_notifications(
    session: ClientSession, client: Client
) -> None:
    uri = "demo://resource/static/document/features.md"
    await session.subscribe_resource(uri)
    await session.call_tool("toggle-subscriber-updates", {})
    await eventually(lambda: uri in client.updates)
    await session.call_tool("toggle-subscriber-updates", {})
    await session.unsubscribe_resource(uri)


async def test_url_elicitation_gets_a_valid_answer(session: ClientSession) -> None:
    arguments = TOOLS["trigger-url-elicitation"][0]
    result = await session.call_tool("trigger-url-elicitation", arguments)
    assert result.content and all(block.type == "text" for block in result.content)


async def test_every_resource_and_template_reads_through(session: ClientSession) -> None:
    listing = await session.list_resources()
    assert len(listing.resources) >= 7
    for resource in listing.resources:
        read = await session.read_resource(resource.uri)
        assert read.contents and str(read.contents[0].uri) == str(resource.uri)
    templates = await session.list_resource_templates()
    assert {t.uri_template for t in templates.resource_templates} == {
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    }
    text_read = await session.read_resource("demo://resource/dynamic/text/1")
    blob_read = await session.read_resource("demo://resource/dynamic/blob/1")
    assert "Resource 1" in text_read.contents[0].text  # type: ignore[union-attr]
    assert base64.b64decode(blob_read.contents[0].blob)  # type: ignore[union-attr]


async def test_every_prompt_and_completions(session: ClientSession) -> None:
    arguments = {
        "simple-prompt": {},
        "args-prompt": {"city": "Paris", "state": "IdF"},
        "completable-prompt": {"department": "Engineering", "name": "Alice"},
        "resource-prompt": {"resourceType": "Text", "resourceId": "2"},
    }
    listing = await session.list_prompts()
    assert {prompt.name for prompt in listing.prompts} == set(arguments)
    for name, given in arguments.items():
        prompt = await session.get_prompt(name, given)
        assert prompt.messages, name
    completion = await session.complete(
        PromptReference(type="ref/prompt", name="completable-prompt"),
        {"name": "department", "value": "E"},
    )
    assert "Engineering" in completion.completion.values


async def test_ping_and_one_record_per_tool_call(session: ClientSession, home: Path) -> None:
    await session.send_ping()
    before = len(read_trace(home / "trace.jsonl"))
    await session.call_tool("get-tiny-image", {})
    records = read_trace(home / "trace.jsonl")
    assert len(records) == before + 1
    assert records[-1]["execution"]["tool_name"] == "get-tiny-image"
    assert records[-1]["proxy"]["server"].endswith("mcp-server-everything stdio")


async def test_a_task_result_is_routed_as_the_tool_s_result(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    client = await RawClient.start(
        proxy_argv(everything_command(), "--trace", str(trace)), tmp_path
    )
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    await client.request("initialize", params)
    await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {
        "name": "simulate-research-query",
        "arguments": {"topic": "cats"},
        "task": {"ttl": 60000},
    }
    created = await client.request("tools/call", call)
    task_id = created["result"]["task"]["taskId"]
    status = ""
    for _ in range(300):
        status = (await client.request("tasks/get", {"taskId": task_id}))["result"]["status"]
        if status in ("completed", "failed"):
            break
        await asyncio.sleep(0.1)
    assert status == "completed"
    result = (await client.request("tasks/result", {"taskId": task_id}))["result"]
    assert CallToolResult.model_validate(result).content[0].text.startswith("# Research Report")  # type: ignore[union-attr]
    assert await client.close() == 0
    (record,) = read_trace(trace)
    assert record["execution"]["tool_name"] == "simulate-research-query"
