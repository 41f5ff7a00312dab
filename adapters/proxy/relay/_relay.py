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

import anyio

from ...sanitize._line import untrusted_line
from .._jsonrpc import REQUEST_TIMEOUT, UPSTREAM_CLOSED, IdKey, error_response, notification
from ._client_side import ClientSide
from ._server_side import ServerSide
from ._state import SESSION_LABEL, UPSTREAM_GONE, log

__all__ = ["SESSION_LABEL", "UPSTREAM_GONE", "Relay", "log"]


class Relay(ClientSide, ServerSide):
    """One client, one server, one gate: run it with `await relay.run()` (`_client_side` and
    `_server_side` handle each direction, `_state` holds what they share)."""

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

    async def _deadline_loop(self) -> None:
        while True:
            await self._deadline(await self._expired.get())
