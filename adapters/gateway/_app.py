"""The gateway's ASGI application: the MCP endpoint (`--path`, default `/mcp`), `/healthz`,
`/readyz` and `/metrics`.

Every request to the endpoint passes the front door first (`_security`: Host, Origin, bearer
token), then goes to its session's transport, the SDK's `StreamableHTTPServerTransport`, which
speaks the protocol: POST carries one client message (answered on an SSE stream, or 202 for a
notification or an answer), GET opens the server-to-client stream, DELETE ends the session. A
POST without `Mcp-Session-Id` must be an `initialize`: it opens a session (`_session`), whose
id the transport's answer carries.

A request refused here gets an HTTP status that says what and a JSON-RPC error that says why
(with the request's id when it had one): 400 a malformed or misplaced request, 401 no valid
token, 403 a foreign Origin, 404 no such session (it ended, idled out, belongs to another
client or lived on a replica that is gone: initialize again, as the specification asks), 405,
408 a body slower than `--read-timeout` and 413 a body over `--max-request-bytes` (both close
the connection: its unread rest is no request), 421 a foreign Host, 429 more requests in
flight in the session than `--session-concurrency`, 503 `--max-sessions` reached or the
gateway draining (both with `Retry-After`). A connection
whose request head is slower than `--read-timeout` is closed unanswered (`_http`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from ..proxy._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    encode,
)
from ..proxy._serve import target_notices
from ..proxy.relay import log
from ..sanitize._line import untrusted_line
from ._body import read_body, read_message, replayed
from ._gateway import Gateway
from ._metrics import CONTENT_TYPE
from ._options import SessionTarget, session_target
from ._security import owner_digest
from ._session import Session, with_session

__all__ = ["GatewayApp"]

SESSION_HEADER: Final = "mcp-session-id"
_RETRY_AFTER_S: Final = "5"
_OPS: Final = ("/healthz", "/readyz", "/metrics")
_NOT_ADMITTED: Final = {
    "max_sessions": (
        503,
        "the gateway is at its limit of {0} sessions (--max-sessions), each with a request "
        "in flight or a stream open; try again shortly",
    ),
    "credential_cap": (
        429,
        "these credentials have {1} sessions open, their limit (--max-sessions-per-credential), "
        "each with a request in flight or a stream open; end one (DELETE) or try again shortly",
    ),
    "draining": (503, "the gateway is shutting down and opens no new session; try again shortly"),
}


class GatewayApp:
    """The ASGI callable uvicorn serves."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._path = gateway.options.path.rstrip("/") or "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no lifespan events (uvicorn runs with `lifespan="off"`), no websockets
        path = scope["path"].rstrip("/") or "/"
        if path == self._path:
            await self._endpoint(scope, receive, send)
        elif path in _OPS and scope["method"] in ("GET", "HEAD"):
            await self._operations(path, scope, receive, send)
        else:
            text = f"nothing here; the MCP endpoint is {self._path}"
            await _refused(404, INVALID_REQUEST, text)(scope, receive, send)

    # -- operations -----------------------------------------------------------------------------

    async def _operations(self, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        gateway = self.gateway
        response: Response
        if path == "/healthz":
            response = _json(200, {"status": "ok"})
        elif path == "/readyz":
            ready = gateway.ready and not gateway.draining
            state = {
                "status": "ready" if ready else "draining" if gateway.draining else "starting",
                "sessions": len(gateway),
                "max_sessions": gateway.options.max_sessions,
            }
            response = _json(200 if ready else 503, state)
        elif not gateway.checks.authorized(Request(scope).headers.get("authorization")):
            gateway.metrics.refused.labels("unauthorized").inc()
            response = _unauthorized()
        else:
            response = Response(gateway.metrics.exposition(), media_type=CONTENT_TYPE)
        await response(scope, receive, send)

    # -- the MCP endpoint -----------------------------------------------------------------------

    async def _endpoint(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        refusal = self._front_door(request)
        if refusal is not None:
            return await refusal(scope, receive, send)
        method = request.method
        body: bytes | None = None
        message: Any = None
        if method == "POST":
            seconds = self.gateway.options.read_timeout
            with anyio.move_on_after(seconds) as reading:
                body = await read_body(receive, self.gateway.options.max_request_bytes)
            if reading.cancelled_caught:
                text = f"the request body did not arrive within {seconds:g} s (--read-timeout)"
                return await _closing(self._refuse("slow_body", 408, text))(scope, receive, send)
            if body is None:
                limit = self.gateway.options.max_request_bytes
                text = f"the request body is over the gateway's limit of {limit} bytes"
                return await _closing(self._refuse("too_large", 413, text))(scope, receive, send)
            receive = replayed(body, receive)
            message, malformed = read_message(body)
            if malformed is not None:  # before the session question: say what is wrong first
                code, text = malformed
                refused = self._refuse("bad_request", 400, text, message, code=code)
                return await refused(scope, receive, send)
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            return await self._opening(scope, receive, send, request, message)
        owner = owner_digest(request.headers, self.gateway.options.forward_headers)
        session = self.gateway.find(session_id, owner)
        if session is None:
            text = (
                f"no session `{untrusted_line(session_id, 80)}` here: it ended, idled out, "
                "or lived on a replica that is gone; initialize a new session"
            )
            return await self._refuse("unknown_session", 404, text)(scope, receive, send)
        problem = _other_model(request, session)
        if problem is not None:
            return await self._refuse("bad_request", 400, problem, message)(scope, receive, send)
        await self._in_session(session, scope, receive, send, message)

    def _front_door(self, request: Request) -> Response | None:
        checks = self.gateway.checks
        headers = request.headers
        problem = checks.host_problem(headers.get("host"))
        if problem is not None:
            return self._refuse("host", 421, problem)
        problem = checks.origin_problem(headers.get("origin"))
        if problem is not None:
            return self._refuse("origin", 403, problem)
        if not checks.authorized(headers.get("authorization")):
            self.gateway.metrics.refused.labels("unauthorized").inc()
            log(f"refused a request without a valid bearer token from {_peer(request)}")
            return _unauthorized()
        if request.method not in ("POST", "GET", "DELETE"):
            text = f"method {untrusted_line(request.method, 20)} is not allowed here"
            refused = self._refuse("method", 405, text)
            refused.headers["allow"] = "GET, POST, DELETE"
            return refused
        return None

    async def _opening(
        self, scope: Scope, receive: Receive, send: Send, request: Request, message: Any
    ) -> None:
        """A request without a session id: an `initialize` opens a session, nothing else does."""
        gateway = self.gateway
        if not (_is_request(message) and message.get("method") == "initialize"):
            text = (
                "no Mcp-Session-Id: a session begins with an `initialize` request, and every "
                "later request carries the id its answer gave"
            )
            refused = self._refuse("bad_request", 400, text, message)
            return await refused(scope, receive, send)
        why = gateway.admit(owner_digest(request.headers, gateway.options.forward_headers))
        if why is not None:
            code, said = _NOT_ADMITTED[why]
            limits = gateway.options
            said = said.format(limits.max_sessions, limits.max_sessions_per_credential)
            refused = self._refuse(why, code, said, message, code=INTERNAL_ERROR)
            refused.headers["retry-after"] = _RETRY_AFTER_S
            return await refused(scope, receive, send)
        target = session_target(request.headers, request.query_params, gateway.options.proxy.target)
        if isinstance(target, str):
            return await self._refuse("bad_request", 400, target, message)(scope, receive, send)
        session = self._new_session(request, target, message)
        await gateway.open(session)
        log(
            f"{session.label} opened for {target.provider}/{target.model} ({target.source}) by "
            f"{session.client.get('name', 'an unnamed client')}; {len(gateway)} open"
        )
        if target.source != "default":  # the default target was said at start
            await self._say_notices(session, target)
        status = await self._served(session, scope, receive, send, counted=True)
        if status is None or status >= 400:
            session.stop("failed")

    async def _say_notices(self, session: Session, target: SessionTarget) -> None:
        """A target's warnings (a misspelt provider header), once per target per process;
        resolved off the loop (a local runtime may be asked, within its deadline)."""
        if not self.gateway.notices.first_time(target.provider, target.model):
            return
        gate = self.gateway.gate
        lines = await anyio.to_thread.run_sync(
            lambda: target_notices(gate, target.provider, target.model, with_config=False)
        )
        for line in lines:
            log(f"{session.label} ({target.provider}/{target.model}): {line}")

    def _new_session(self, request: Request, target: SessionTarget, message: Any) -> Session:
        from mcp.server.streamable_http import StreamableHTTPServerTransport

        gateway = self.gateway
        options = gateway.options
        session_id = gateway.mint_id()
        forwarded = {
            name: value for name in options.forward_headers if (value := request.headers.get(name))
        }
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        return Session(
            session_id,
            StreamableHTTPServerTransport(session_id, idle_timeout=options.idle_timeout),
            owner=owner_digest(request.headers, options.forward_headers),
            target=target,
            client_info=params.get("clientInfo"),
            options=with_session(options.proxy, gateway.cache_root, session_id, forwarded, target),
            concurrency=options.session_concurrency,
        )

    async def _in_session(
        self, session: Session, scope: Scope, receive: Receive, send: Send, message: Any
    ) -> None:
        if not _is_request(message):  # a GET, a DELETE, a notification or an answer
            await self._served(session, scope, receive, send, counted=False)
            return
        if self.gateway.draining:
            text = "the gateway is shutting down; this session ends soon: initialize a new one"
            refused = self._refuse("draining", 503, text, message, code=INTERNAL_ERROR)
            refused.headers["retry-after"] = _RETRY_AFTER_S
            return await refused(scope, receive, send)
        if session.in_flight >= session.concurrency:
            text = (
                f"this session already has {session.in_flight} requests in flight, its limit "
                "(--session-concurrency); wait for an answer first"
            )
            refused = self._refuse("concurrency", 429, text, message, code=INTERNAL_ERROR)
            refused.headers["retry-after"] = "1"
            return await refused(scope, receive, send)
        await self._served(session, scope, receive, send, counted=True)

    async def _served(
        self, session: Session, scope: Scope, receive: Receive, send: Send, *, counted: bool
    ) -> int | None:
        """Hand the request to the session's transport; the status it answered with. A
        counted request stops counting as its answer's last byte goes out, before the client
        can send the next one (the handler itself returns a little later)."""
        status: int | None = None
        downstream = session.downstream
        listening = scope["method"] == "GET" and downstream is not None
        counting = counted

        def done() -> None:
            nonlocal counting
            if counting:
                counting = False
                session.in_flight -= 1

        async def watched(event: Message) -> None:
            nonlocal status
            if event["type"] == "http.response.body" and not event.get("more_body", False):
                done()
            await send(event)
            if event["type"] == "http.response.start":
                status = event["status"]
                if listening and status == 200:
                    assert downstream is not None
                    self.gateway.spawn(downstream.listening)

        if counted:
            session.in_flight += 1
        session.touch()
        try:
            await session.transport.handle_request(scope, receive, watched)
        finally:
            done()
            session.touch()
            if listening and status == 200:
                assert downstream is not None
                downstream.not_listening()
        return status

    def _refuse(
        self,
        reason: str,
        status: int,
        text: str,
        message: Any = None,
        *,
        code: int = INVALID_REQUEST,
    ) -> Response:
        self.gateway.metrics.refused.labels(reason).inc()
        return _refused(status, code, text, _request_id(message))


def _refused(status: int, code: int, text: str, request_id: Any = None) -> Response:
    """The HTTP status, and a JSON-RPC error saying why (the request's id, when it had one)."""
    error = {"code": code, "message": f"visiongate gateway: {text}"}
    body = encode({"jsonrpc": "2.0", "id": request_id, "error": error})
    return Response(body, status_code=status, media_type="application/json")


def _closing(response: Response) -> Response:
    """`response`, and the connection closed after it: the rest of the body was never read,
    so what follows on the connection is not a request's head."""
    response.headers["connection"] = "close"
    return response


def _unauthorized() -> Response:
    refused = _refused(
        401,
        INVALID_REQUEST,
        "a valid bearer token is required (Authorization: Bearer <token>)",
    )
    refused.headers["www-authenticate"] = 'Bearer realm="visiongate"'
    return refused


def _json(status: int, value: Mapping[str, Any]) -> Response:
    return Response(json.dumps(value), status_code=status, media_type="application/json")


def _other_model(request: Request, session: Session) -> str | None:
    """A later request that names a model other than its session's."""
    named = session_target(request.headers, request.query_params, session.options.target)
    if isinstance(named, str):
        return named
    if named.source != "default" and (named.provider, named.model) != (
        session.target.provider,
        session.target.model,
    ):
        return (
            f"this session routes for {session.target.provider}/{session.target.model}; "
            "start a new session for another model"
        )
    return None


def _is_request(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and isinstance(message.get("method"), str)
        and message.get("id") is not None
    )


def _request_id(message: Any) -> Any:
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, str | int) else None


def _peer(request: Request) -> str:
    client = request.client
    return f"{client.host}:{client.port}" if client is not None else "an unknown peer"
