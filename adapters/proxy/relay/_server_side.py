"""The server's side of a relay: its answers (routed by the gate, or cleaned), its requests and
notifications (cleaned), its malformed or oversized lines, and its going away."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio

from visiongate.kernel._framing import Oversized

from ...sanitize._line import untrusted_line
from .._call import Call
from .._fit import over_limit_error
from .._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    REQUEST_TIMEOUT,
    Message,
    encode,
    error_response,
    parse,
)
from .._resources import has_image_blobs
from .._surfaces import clean_error, clean_notification, clean_result, clean_server_request
from ._state import (
    FIRST_REQUEST_S,
    POLICY_CHECK_S,
    POLICY_COMPILE_S,
    UNREADABLE,
    UPSTREAM_GONE,
    Pending,
    RelayState,
    log,
)

if TYPE_CHECKING:
    from visiongate.engine import PolicyCheck

_TASKS_KEPT: Final = 10_000
_EXCERPT: Final = 80


class ServerSide(RelayState):
    """What the relay does with each line the server sends."""

    async def _upstream_loop(self) -> None:
        async for line in self._up.lines():
            self._heard = True
            if isinstance(line, Oversized):
                await self._upstream_oversized(line)
            else:
                for message in parse(line):
                    await self._from_upstream(message, len(line))
        await self._upstream_gone()

    async def _from_upstream(self, message: Message, size: int) -> None:
        if message.kind == "response":
            await self._answer(message, size)
        elif message.kind == "request":
            await self._server_request(message)
        elif message.kind == "notification":
            await self._server_notification(message)
        else:
            await self._upstream_malformed(message)

    async def _answer(self, message: Message, size: int) -> None:
        if self._own.deliver(message.key, message.body):
            return  # it answers the proxy's own request (`_own`), not the client's
        pending = self._take(message.key)
        if pending is None:
            log(f"an answer to no request in flight (id {_shown(message.id)}) was dropped")
            return
        if pending.call is not None:
            self._learn_task(pending.call, message.body)
            self._start(self._routed_answer, pending, message.body, size)
            return
        if pending.method == "resources/read" and has_image_blobs(message.body):
            self._start(self._resource_answer, message, size)
            return
        await self._to_client(self._cleaned_answer(pending.method, message))

    async def _resource_answer(self, message: Message, size: int) -> None:
        """A `resources/read` answer whose image blobs go through the gate (`_resources`)."""
        try:
            answer = await asyncio.wait_for(
                self._calls.answer_resource(message.id, message.body, size), self._timeout
            )
        except Exception as error:  # a timeout, a malformed answer: fail closed, say why
            problem = untrusted_line(f"{type(error).__name__}: {error}", 300)
            log(f"could not route the `resources/read` images: {problem}")
            text = f"visiongate proxy: the `resources/read` images could not be routed: {problem}"
            answer = error_response(message.id, INTERNAL_ERROR, text)
        await self._to_client(answer)

    async def _routed_answer(self, pending: Pending, body: Mapping[str, Any], size: int) -> None:
        call = pending.call
        assert call is not None
        self._routing[id(pending)] = (pending.request_id, pending.method)
        if pending.policy_check is not None:
            await _policy_checked(pending.policy_check)
        try:
            # Its deadline ended with the server's answer; routing gets a whole one of its own,
            # so a step that never ends still answers the call (every request, exactly once).
            answer = await asyncio.wait_for(self._calls.answer(call, body, size), self._timeout)
        except TimeoutError:
            problem = f"routing the result took longer than {self._timeout:g}s (--timeout)"
            log(f"`{untrusted_line(call.tool or '', 80)}`: {problem}")
            self._calls.failed(call, "timeout", problem, raw_size=size)
            text = f"visiongate proxy: {problem}"
            answer = error_response(call.request_id, REQUEST_TIMEOUT, text)
        except Exception as error:
            problem = untrusted_line(f"{type(error).__name__}: {error}", 300)
            log(f"could not route the `tools/call` result: {problem}")
            self._calls.failed(call, "proxy_error", problem, raw_size=size)
            answer = error_response(call.request_id, INTERNAL_ERROR, f"visiongate proxy: {problem}")
        if self._routing.pop(id(pending), None) is not None:
            await self._to_client(answer)

    def _learn_task(self, call: Call, body: Mapping[str, Any]) -> None:
        """A `tools/call` that created a task: its `tasks/result` is routed as this tool's."""
        result = body.get("result")
        task = result.get("task") if isinstance(result, Mapping) else None
        if isinstance(task, Mapping) and isinstance(task.get("taskId"), str):
            if len(self._task_tools) >= _TASKS_KEPT:
                del self._task_tools[next(iter(self._task_tools))]
            self._task_tools[task["taskId"]] = call.tool

    def _cleaned_answer(self, method: str, message: Message) -> bytes:
        sanitizer = self._calls.gate_sanitizer
        body = message.body
        cleaned: Mapping[str, Any]
        try:
            if "error" in body:
                cleaned = {**body, "error": clean_error(body["error"], sanitizer)}
            else:
                result = clean_result(method, body.get("result"), sanitizer)
                if method == "tools/list":
                    result = self._calls.listed_tools(result)
                cleaned = body if result is body.get("result") else {**body, "result": result}
        except UNREADABLE as error:
            # Fail closed: what cannot be cleaned is not forwarded.
            problem = untrusted_line(f"{error}", 200) or type(error).__name__
            log(f"a `{method}` answer that cannot be cleaned was refused: {problem}")
            text = f"visiongate proxy: the MCP server's `{method}` answer is malformed: {problem}"
            return error_response(message.id, INTERNAL_ERROR, text)
        counts = sanitizer.counts()
        if counts:
            self._calls.cleaned_elsewhere(counts)
        data = message.raw if cleaned is body else encode(cleaned)
        if len(data) > self._limit:
            log(f"the `{method}` answer of {len(data)} bytes is over the client's limit")
            return over_limit_error(message.id, method, len(data), self._limit)
        return data

    async def _server_request(self, message: Message) -> None:
        data = self._cleaned_params(message, clean_server_request)
        if data is None:
            await self._to_upstream(error_response(message.id, INVALID_REQUEST, "malformed"))
        elif len(data) > self._limit:
            log(f"the server's `{message.method}` request is over the client's limit")
            text = f"the request of {len(data)} bytes is over the client's limit of {self._limit}"
            await self._to_upstream(error_response(message.id, INTERNAL_ERROR, text))
        else:
            await self._to_client(data)

    async def _server_notification(self, message: Message) -> None:
        data = self._cleaned_params(message, clean_notification)
        if data is None:
            return
        if len(data) > self._limit:
            log(f"a `{message.method}` notification over the client's limit was dropped")
            return
        await self._to_client(data)

    def _cleaned_params(self, message: Message, clean: Any) -> bytes | None:
        """The message with its params cleaned; None (logged) when they cannot be."""
        params = message.body.get("params")
        if params is None:
            return message.raw
        sanitizer = self._calls.gate_sanitizer
        try:
            cleaned = clean(message.method, params, sanitizer)
        except UNREADABLE as error:
            log(f"a `{message.method}` message that cannot be cleaned was dropped: {error}")
            return None
        counts = sanitizer.counts()
        if counts:
            self._calls.cleaned_elsewhere(counts)
        return message.raw if cleaned is params else encode({**message.body, "params": cleaned})

    async def _upstream_malformed(self, message: Message) -> None:
        excerpt = untrusted_line(message.raw[: _EXCERPT * 4].decode("utf-8", "replace"), _EXCERPT)
        log(f"the MCP server sent a malformed message ({message.problem}): `{excerpt}`")
        pending = self._forget(message.id, "malformed")
        if pending is not None:
            text = (
                f"visiongate proxy: the MCP server `{self._up.label}` answered `{pending.method}` "
                f"with a malformed message: {message.problem}"
            )
            await self._to_client(error_response(pending.request_id, INTERNAL_ERROR, text))
        elif message.key is not None:
            await self._to_upstream(error_response(message.id, INVALID_REQUEST, message.problem))

    async def _upstream_oversized(self, line: Oversized) -> None:
        log(f"a message of {line.size} bytes from the MCP server is over the limit; skipped")
        pending = self._forget(line.found, "too_large")
        if pending is not None:
            text = (
                f"visiongate proxy: the MCP server's answer to `{pending.method}` of {line.size} "
                "bytes is over the proxy's limit for one message (--max-message-bytes)"
            )
            await self._to_client(error_response(pending.request_id, INTERNAL_ERROR, text))

    async def _upstream_gone(self) -> None:
        why = await self._up.gone()
        self._gone = why
        if self._code is None:
            self._code = UPSTREAM_GONE
        log(f"the MCP server `{self._up.label}` {why}; stopping so the client can restart us")
        self._own.close()
        pending, self._pending = list(self._pending.values()), {}
        for item in pending:
            if item.timer is not None:
                item.timer.cancel()
            if item.call is not None:
                self._calls.failed(item.call, "upstream_closed", self._gone_text(item.method))
            await self._answer_gone(item.request_id, item.method)
        if not self._requests:  # asked nothing yet: its `initialize` learns why, then we end
            with anyio.move_on_after(FIRST_REQUEST_S):
                await self._first_request.wait()
        self._stop(UPSTREAM_GONE)


async def _policy_checked(check: PolicyCheck) -> None:
    """Wait for a policy check: its read at most `POLICY_CHECK_S`, then its compile at most
    `POLICY_COMPILE_S`; the policy in force serves past either, and the log says which."""
    for step, limit, what in (
        (check.read, POLICY_CHECK_S, "read"),
        (check.result, POLICY_COMPILE_S, "compiled"),
    ):
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(step)), limit)
        except TimeoutError:
            log(
                f"the policy file could not be {what} within {limit:g}s; this call is "
                "decided under the policy in force"
            )
            return
        except Exception as error:  # the check's own failure is in its result; never the call's
            log(f"the policy check failed: {untrusted_line(str(error), 200)}")
            return


def _shown(value: Any) -> str:
    return untrusted_line(str(value), 40)
