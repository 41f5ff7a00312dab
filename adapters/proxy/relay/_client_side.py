"""The client's side of a relay: its requests (tracked, each with a deadline; the proxy's own
tool answered here), its notifications and its malformed or oversized lines."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from visiongate.kernel._framing import Oversized

from ...sanitize._line import untrusted_line
from .._call import Call
from .._downstream import ClientGone
from .._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Message,
    error_response,
    id_key,
    parse,
)
from .._upstream import UpstreamClosed
from ._state import ROUTED, Pending, RelayState, log


class ClientSide(RelayState):
    """What the relay does with each line the client sends."""

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
        self._pending[key] = Pending(method, message.id, timer, call, check)
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
