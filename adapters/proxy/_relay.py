"""The relay: JSON-RPC between the client and the server, changed only where it must be.

Ids pass through as they are: the proxy's only requests of its own (a `tools/list` when a
tool is called before it was listed, `_own`) use ids no client sends, so the client's ids are
unique upstream and the server's are unique downstream. Each message is parsed once; a message
nothing needs to change (a request, a client's answer, a list-changed notification, a method
this version does not know) is forwarded as the bytes it came in. What the server sends is
cleaned by method (`_surfaces`), tool results are routed by the gate (`_calls`) in their own
tasks, so concurrent calls stay independent and the readers never wait on image work.

Reliability: every client request has a deadline (`timeout`): past it the client gets a
JSON-RPC error and the server a `notifications/cancelled`. A client's cancellation is passed
on and the request forgotten. A malformed or oversized message from either side is logged on
standard error and, when it had an id, answered with a JSON-RPC error; it never ends the
session. When the server exits or closes its output, every request in flight gets an error
saying so and the relay ends with `UPSTREAM_GONE`, so the client can restart the proxy.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from concurrent.futures import Future
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from visiongate.engine import Gate
from visiongate.kernel._framing import Oversized

from ..sanitize._line import untrusted_line
from ._calls import Call, CallRouter
from ._downstream import ClientGone, Downstream
from ._fit import over_limit_error
from ._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    UPSTREAM_CLOSED,
    IdKey,
    Message,
    encode,
    error_response,
    id_key,
    notification,
    parse,
)
from ._own import OwnRequests
from ._resources import has_image_blobs
from ._surfaces import clean_error, clean_notification, clean_result, clean_server_request
from ._upstream import Upstream, UpstreamClosed

__all__ = ["SESSION_LABEL", "UPSTREAM_GONE", "Relay", "log"]

UPSTREAM_GONE: Final = 2
"""Exit status when the server exited or closed its output (as `mcp call` reports it)."""
ROUTED: Final = frozenset({"tools/call", "tasks/result"})
_TASKS_KEPT: Final = 10_000
UNREADABLE: Final = (ValueError, TypeError, RecursionError)
"""What cleaning a server's message can raise: a shape no listing has, nesting too deep."""
_EXCERPT: Final = 80
POLICY_CHECK_S: Final = 0.5
"""How long a tool result waits for the policy check its call started (a slow disk, a FIFO at
the policy path): past it the result is routed under the policy in force."""
FIRST_REQUEST_S: Final = 10.0
"""How long a relay whose server is gone waits for the client's first request, to answer it."""


@dataclass
class _Pending:
    method: str
    request_id: Any
    timer: asyncio.TimerHandle | None
    call: Call | None = None
    policy_check: Future[Any] | None = None
    """The policy reload this call started, off the request path (`--policy` is watched)."""


SESSION_LABEL: ContextVar[str] = ContextVar("visiongate_session_label", default="")
"""Which session a log line is about, where one process relays many (the gateway sets it in
each session's task; the relay's tasks inherit it)."""


def log(text: str) -> None:
    label = SESSION_LABEL.get()
    where = f" [{label}]" if label else ""
    print(f"visiongate proxy{where}: {text}", file=sys.stderr, flush=True)


class Relay:
    """One client, one server, one gate: run it with `await relay.run()`."""

    def __init__(
        self,
        downstream: Downstream,
        upstream: Upstream,
        calls: CallRouter,
        gate: Gate,
        *,
        timeout: float,
        max_result_bytes: int,
        watch_policy: bool = False,
    ) -> None:
        self._down = downstream
        self._up = upstream
        self._calls = calls
        self._gate = gate
        self._timeout = timeout
        self._limit = max_result_bytes
        self._watch = watch_policy
        self._pending: dict[IdKey, _Pending] = {}
        self._task_tools: dict[str, str | None] = {}
        self._code: int | None = None
        self._expired: asyncio.Queue[IdKey] = asyncio.Queue()
        """Requests past their deadline, from the loop's timers to `_deadline_loop`."""
        self._answers: TaskGroup | None = None
        self._readers: TaskGroup | None = None
        self._own = OwnRequests(upstream.send, timeout)
        calls.ask_upstream(self._own.request)
        self._gone: str | None = None
        """Why the server went away, once it did: later requests are answered with it."""
        self._requests = 0
        self._first_request = asyncio.Event()
        self._heard = False
        """Whether the server ever sent a line (a server that never ran is told apart)."""
        self._routing: dict[int, tuple[Any, str]] = {}
        """Answers being routed (out of `_pending` already), by task: owed if we are stopped."""

    async def run(self) -> int:
        """Relay until the client closes its input (0) or the server goes away
        (`UPSTREAM_GONE`); answers already being routed are finished first. Cancelled (a
        signal), it answers what is in flight with an error before it ends."""
        try:
            async with anyio.create_task_group() as answers:
                self._answers = answers
                async with anyio.create_task_group() as readers:
                    self._readers = readers
                    readers.start_soon(self._client_loop)
                    readers.start_soon(self._upstream_loop)
                    readers.start_soon(self._deadline_loop)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                await self._answer_stopped()
            raise
        finally:
            for pending in self._pending.values():
                if pending.timer is not None:
                    pending.timer.cancel()
        return self._code or 0

    async def _answer_stopped(self) -> None:
        owed = [(p.request_id, p.method) for p in self._pending.values()]
        owed += list(self._routing.values())
        self._pending, self._routing = {}, {}
        for request_id, method in owed:
            text = f"visiongate proxy: stopped before answering `{untrusted_line(method, 60)}`"
            await self._to_client(error_response(request_id, UPSTREAM_CLOSED, text))

    def _stop(self, code: int) -> None:
        """End the session; the first reason to stop gives the exit status."""
        if self._code is None:
            self._code = code
        if self._readers is not None:
            self._readers.cancel_scope.cancel()

    # -- the client's side --------------------------------------------------------------------

    async def _client_loop(self) -> None:
        try:
            async for line in self._down.lines():
                if isinstance(line, Oversized):
                    await self._client_oversized(line)
                else:
                    for message in parse(line):
                        await self._from_client(message)
        except ClientGone:
            self._stop(0)  # nobody reads our answers any more: the session is over
            return
        # The client closed its input: what it is owed is still delivered (each request has
        # its deadline), since a client may close its side and keep reading.
        while self._pending:
            await asyncio.sleep(0.01)
        self._stop(0)

    async def _from_client(self, message: Message) -> None:
        if self._gone is not None and message.kind == "request":
            await self._answer_gone(message.id, message.method)
            return
        if message.kind == "invalid":
            log(f"a malformed message from the client: {message.problem}")
            if message.key is not None:
                code = PARSE_ERROR if message.problem.startswith("not JSON") else INVALID_REQUEST
                await self._to_client(error_response(message.id, code, message.problem))
            return
        if message.kind == "request" and self._calls.is_local(message.method, message.params):
            self._start(self._local_call, message)
            return
        if message.kind == "request" and not self._track(message):
            return
        if message.kind == "notification" and message.method == "notifications/cancelled":
            self._forget(message.params.get("requestId"), "cancelled")
        try:
            await self._up.send(message.raw)
        except UpstreamClosed:
            pass  # the server's reader ends too, and answers what is pending
        except ValueError as error:  # the SDK's HTTP transport refused the message
            await self._refused_upstream(message, str(error))

    def _track(self, message: Message) -> bool:
        """Note a request in flight and set its deadline; False for an id already in use."""
        key = message.key
        assert key is not None
        if key in self._pending:
            answer = error_response(message.id, INVALID_REQUEST, "request id already in use")
            self._start(self._to_client, answer)
            return False
        method = message.method
        call = check = None
        if method in ROUTED:
            if self._watch:
                check = self._gate.reload_in_background()
            call = Call(message.id, self._tool_of(method, message.params))
        timer = asyncio.get_running_loop().call_later(self._timeout, self._deadline_passed, key)
        self._pending[key] = _Pending(method, message.id, timer, call, check)
        self._requests += 1
        self._first_request.set()
        return True

    async def _local_call(self, message: Message) -> None:
        """A call of the proxy's own tool, answered here (`_calls`), never sent upstream."""
        try:
            answer = await self._calls.answer_local(message.id, message.params)
        except Exception as error:
            problem = untrusted_line(f"{type(error).__name__}: {error}", 300)
            log(f"could not answer a call of the proxy's own tool: {problem}")
            answer = error_response(message.id, INTERNAL_ERROR, f"visiongate proxy: {problem}")
        await self._to_client(answer)

    def _tool_of(self, method: str, params: Mapping[str, Any]) -> str | None:
        if method == "tools/call":
            name = params.get("name")
            return name if isinstance(name, str) else None
        return self._task_tools.get(str(params.get("taskId")))

    def _take(self, key: IdKey | None) -> _Pending | None:
        """The request in flight under `key`, no longer pending: its deadline is cancelled."""
        pending = self._pending.pop(key, None) if key is not None else None
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()
        return pending

    def _forget(self, request_id: Any, outcome: str) -> _Pending | None:
        pending = self._take(id_key(request_id))
        if pending is not None and pending.call is not None:
            self._calls.failed(pending.call, outcome, f"`{pending.method}` {outcome}")
        return pending

    async def _client_oversized(self, line: Oversized) -> None:
        request_id = line.found
        unanswered = (
            "" if id_key(request_id) is not None else " (no top-level id found: not answered)"
        )
        log(
            f"a message of {line.size} bytes from the client is over the limit; skipped{unanswered}"
        )
        if not unanswered:
            text = f"message of {line.size} bytes is over the proxy's limit (--max-message-bytes)"
            await self._to_client(error_response(request_id, INVALID_REQUEST, text))

    async def _refused_upstream(self, message: Message, problem: str) -> None:
        if message.kind == "request" and self._forget(message.id, "refused") is not None:
            text = f"visiongate proxy: cannot send it: {untrusted_line(problem, 200)}"
            await self._to_client(error_response(message.id, INVALID_REQUEST, text))

    async def _to_client(self, data: bytes) -> None:
        try:
            await self._down.send(data)
        except ClientGone:
            self._stop(0)

    def _start(self, function: Any, *args: Any) -> None:
        assert self._answers is not None
        self._answers.start_soon(function, *args)

    # -- the server's side --------------------------------------------------------------------

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

    async def _routed_answer(self, pending: _Pending, body: Mapping[str, Any], size: int) -> None:
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

    async def _to_upstream(self, data: bytes) -> None:
        try:
            await self._up.send(data)
        except (UpstreamClosed, ValueError) as error:
            log(f"cannot write to the MCP server: {untrusted_line(str(error), 200)}")

    async def _deadline(self, key: IdKey) -> None:
        pending = self._take(key)
        if pending is None:
            return
        seconds = f"{self._timeout:g}"
        text = (
            f"visiongate proxy: the MCP server `{self._up.label}` did not answer "
            f"`{pending.method}` within {seconds}s; the request was cancelled (--timeout)"
        )
        log(text.removeprefix("visiongate proxy: "))
        if pending.call is not None:
            self._calls.failed(pending.call, "timeout", f"no answer within {seconds}s")
        await self._to_client(error_response(pending.request_id, REQUEST_TIMEOUT, text))
        if pending.method != "initialize":  # the protocol forbids cancelling `initialize`
            reason = f"timed out after {seconds}s in visiongate proxy"
            cancel = {"requestId": pending.request_id, "reason": reason}
            await self._to_upstream(notification("notifications/cancelled", cancel))

    def _deadline_passed(self, key: IdKey) -> None:
        # A timer callback runs outside any task: hand the work to a task of the relay.
        self._expired.put_nowait(key)

    async def _deadline_loop(self) -> None:
        while True:
            await self._deadline(await self._expired.get())

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

    async def _answer_gone(self, request_id: Any, method: str) -> None:
        self._requests += 1
        self._first_request.set()
        text = self._gone_text(method)
        await self._to_client(error_response(request_id, UPSTREAM_CLOSED, text))

    def _gone_text(self, method: str) -> str:
        shown = untrusted_line(method, 60)
        then = (
            f" before answering `{shown}`" if self._heard else f", so `{shown}` cannot be answered"
        )
        return f"visiongate proxy: the MCP server `{self._up.label}` {self._gone}{then}"


async def _policy_checked(check: Future[Any]) -> None:
    """Wait for a policy check, at most `POLICY_CHECK_S`; the policy in force serves past it."""
    try:
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(check)), POLICY_CHECK_S)
    except TimeoutError:
        log(
            f"the policy file could not be checked within {POLICY_CHECK_S:g}s; this call is "
            "decided under the policy in force"
        )
    except Exception as error:  # the check's own failure is in its result; never the call's
        log(f"the policy check failed: {untrusted_line(str(error), 200)}")


def _shown(value: Any) -> str:
    return untrusted_line(str(value), 40)
