"""The playground's HTTP side: the standard library's server on loopback, in front of the worker.

The front door is the gateway's (`adapters.gateway._security.Checks`): a `Host` that is not a
loopback name is refused (421) and an `Origin` other than the page's own (403), against DNS
rebinding; then every API request must carry the random token printed at start
(`X-Playground-Token`, compared in constant time), and the page itself is served only to
its URL with the token. A body is read only when its `Content-Length` is within
`MAX_BODY_BYTES` (413 otherwise, 411 without one), and must be one JSON object of strings.
No request names a file: the policy saved is the one given at start, the tests run are the
ones beside it, rule pages are looked up by code among the known codes.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from visiongate.adapters.gateway._security import Checks

from ._pages import rule_page
from ._save import SaveRefused, save_policy
from ._worker import Worker, WorkerTimeout

MAX_BODY_BYTES: Final = 4 * 1024 * 1024
"""A request body past this is refused unread (a policy file may be 8 MiB; the page's is less)."""
LINT_SECONDS: Final = 5.0
"""How long lint and the table may take for one keystroke pause before they are cut off."""
SLOW_SECONDS: Final = 30.0
"""Tests and routes (the first route reads the model catalog)."""
STATIC: Final = {
    "playground.js": "text/javascript; charset=utf-8",
    "playground.css": "text/css; charset=utf-8",
}
HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
TOKEN_HEADER: Final = "X-Playground-Token"


@dataclass
class Playground:
    """What the server serves: the texts loaded at start, where Save writes, the worker."""

    policy_text: str
    policy_label: str
    config_text: str = ""
    save_path: Path | None = None
    tests_path: Path | None = None
    """The policy whose tests are run (the file given, or the bundled default's file)."""
    lint: Mapping[str, Any] = field(default_factory=dict)
    config_label: str = "config.yaml"
    """How the agent config's findings and provenance name it (the `--config` file)."""
    """The project's lint settings (`severity`, `fail_level`), applied as `lint` applies them."""
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    lint_seconds: float = LINT_SECONDS
    slow_seconds: float = SLOW_SECONDS
    worker: Worker = field(init=False)
    """Lint, the table and Save's check: what follows typing."""
    slow_worker: Worker = field(init=False)
    """Tests and routes, in a process of their own, so a keystroke never waits behind them."""
    saved_text: str = field(init=False)
    """What the file held when loaded or last saved here (a change on disk is a conflict)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.worker = Worker(self.tests_path, self.lint)
        self.slow_worker = Worker(self.tests_path, self.lint)
        self.saved_text = self.policy_text

    def warm(self) -> None:
        """Start the workers now, so that the page's first requests do not wait for them."""
        self.worker.warm()
        self.slow_worker.warm()

    def close(self) -> None:
        self.worker.close()
        self.slow_worker.close()

    def state(self) -> dict[str, Any]:
        from visiongate.engine._load import bundled_policy_names

        return {
            "policy": self.saved_text,
            "config": self.config_text,
            "file": self.policy_label,
            "save_target": self.policy_label if self.save_path is not None else None,
            "bundled": bundled_policy_names(),
        }

    def analyze(self, body: Mapping[str, str]) -> dict[str, Any]:
        request = {"kind": "analyze", **self._texts(body), **self._baseline(body)}
        return self._ask(request, self.lint_seconds, "lint")

    def tests(self, body: Mapping[str, str]) -> dict[str, Any]:
        request = {"kind": "tests", **self._texts(body)}
        return self._ask(request, self.slow_seconds, "the tests", self.slow_worker)

    def route(self, body: Mapping[str, str]) -> dict[str, Any]:
        request = {
            "kind": "route",
            **self._texts(body),
            "provider": body.get("provider", ""),
            "model": body.get("model", ""),
        }
        return self._ask(request, self.slow_seconds, "the route", self.slow_worker)

    def save(self, body: Mapping[str, str]) -> dict[str, Any]:
        if self.save_path is None:
            return {"error": "nothing to save to: start the playground with --policy FILE"}
        formatted = self._ask(
            {"kind": "format", **self._texts(body)}, self.lint_seconds, "the check before saving"
        )
        if "text" not in formatted:
            return formatted
        with self.lock:
            try:
                save_policy(
                    self.save_path,
                    formatted["text"],
                    self.saved_text,
                    body.get("overwrite") == "yes",
                )
            except SaveRefused as refused:
                return {"error": str(refused), "conflict": refused.conflict}
            self.saved_text = formatted["text"]
        return {"saved": self.policy_label, "text": formatted["text"]}

    def _texts(self, body: Mapping[str, str]) -> dict[str, str]:
        return {
            "policy": body.get("policy", ""),
            "config": body.get("config", ""),
            "file": self.policy_label,
            "config_file": self.config_label,
        }

    def _baseline(self, body: Mapping[str, str]) -> dict[str, str]:
        """The text the cells are compared with: as loaded, a bundled policy, or a file the
        person picked in the page (sent as text; the server opens no path)."""
        from visiongate.engine._load import bundled_policy_names, bundled_policy_text

        kind = body.get("baseline", "loaded")
        if kind == "other" and "baseline_text" in body:
            return {"baseline_text": body["baseline_text"], "baseline_label": "the other file"}
        if kind.startswith("bundled:") and kind[8:] in bundled_policy_names():
            name = kind[8:]
            return {"baseline_text": bundled_policy_text(name), "baseline_label": f"bundled {name}"}
        return {
            "baseline_text": self.policy_text,
            "baseline_label": f"{self.policy_label} as loaded",
        }

    def _ask(
        self, request: dict[str, Any], seconds: float, what: str, worker: Worker | None = None
    ) -> dict[str, Any]:
        try:
            return (worker or self.worker).call(request, seconds)
        except WorkerTimeout as cut:
            return {"error": f"{what} {cut}", "cut_off": True}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    playground: Playground
    checks: Checks


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "visiongate-playground"
    sys_version = ""
    timeout = 30  # a peer that stops sending mid-request is dropped
    # The head and the body of an answer are two writes: with Nagle's algorithm the body
    # waits for the peer's delayed ACK of the head (40 ms on Linux), on every keystroke.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the token is in the page's URL, and the terminal is the operator's."""

    # -- the front door ---------------------------------------------------------------------

    def _refused_at_door(self) -> bool:
        checks = self.server.checks
        host, origin = self.headers.get("Host"), self.headers.get("Origin")
        if checks.host_problem(host) is not None:
            refusal = f"the Host `{host or ''}` is not a loopback name this playground answers"
            self._send_json(HTTPStatus.MISDIRECTED_REQUEST, {"error": refusal})
            return True
        if checks.origin_problem(origin) is not None:
            refusal = f"the Origin `{origin}` is not this playground's page"
            self._send_json(HTTPStatus.FORBIDDEN, {"error": refusal})
            return True
        return False

    def _token_ok(self, presented: str | None) -> bool:
        token = self.server.playground.token.encode()
        return presented is not None and hmac.compare_digest(presented.encode(), token)

    # -- GET: the page, its two files, rule pages ---------------------------------------------

    def do_GET(self) -> None:
        if self._refused_at_door():
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        token = query["token"][0] if query.get("token") else None
        if url.path.startswith("/static/") and url.path[8:] in STATIC:
            name = url.path[8:]
            self._send(HTTPStatus.OK, _static(name), STATIC[name])
        elif not self._token_ok(token):
            self._send_text(
                HTTPStatus.FORBIDDEN,
                "open the address `visiongate playground` printed: it carries the token",
            )
        elif url.path == "/":
            self._send(HTTPStatus.OK, _static("index.html"), "text/html; charset=utf-8")
        elif url.path.startswith("/rule/"):
            page = rule_page(url.path[6:], self.server.playground.token)
            status = HTTPStatus.OK if page is not None else HTTPStatus.NOT_FOUND
            self._send(status, (page or "no such lint code").encode(), "text/html; charset=utf-8")
        else:
            self._send_text(HTTPStatus.NOT_FOUND, "no such page")

    # -- POST: the API ------------------------------------------------------------------------

    def do_POST(self) -> None:
        if self._refused_at_door():
            return
        if not self._token_ok(self.headers.get(TOKEN_HEADER)):
            self._send_json(
                HTTPStatus.FORBIDDEN,
                {"error": "wrong or missing token: reload the address printed at start"},
            )
            return
        action = _ACTIONS.get(urlsplit(self.path).path)
        body = self._body()
        if body is None:
            return
        if action is None:
            self._send_json(HTTPStatus.NOT_FOUND, {"error": "no such action"})
            return
        self._send_json(HTTPStatus.OK, action(self.server.playground, body))

    def _body(self) -> dict[str, str] | None:
        """The request's JSON object of strings, or None once refused."""
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._send_json(
                HTTPStatus.LENGTH_REQUIRED,
                {"error": "a request body needs a Content-Length"},
                close=True,
            )
            return None
        if int(length) > MAX_BODY_BYTES:
            self._send_json(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                {
                    "error": f"the request is {int(length):,} bytes, more than the "
                    f"{MAX_BODY_BYTES:,} this playground reads"
                },
                close=True,
            )
            return None
        raw = self.rfile.read(int(length))
        try:
            document = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            document = None
        if not isinstance(document, dict) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in document.items()
        ):
            self._send_json(
                HTTPStatus.BAD_REQUEST, {"error": "the request must be one JSON object of strings"}
            )
            return None
        return document

    # -- answers ------------------------------------------------------------------------------

    def _send(self, status: HTTPStatus, data: bytes, kind: str, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the page was closed meanwhile
            self.close_connection = True

    def _send_json(
        self, status: HTTPStatus, document: Mapping[str, Any], close: bool = False
    ) -> None:
        data = json.dumps(document).encode("utf-8")
        self._send(status, data, "application/json", close)

    def _send_text(self, status: HTTPStatus, text: str) -> None:
        self._send(status, text.encode("utf-8"), "text/plain; charset=utf-8")


_ACTIONS: Final = {
    "/api/state": lambda playground, _body: playground.state(),
    "/api/analyze": Playground.analyze,
    "/api/tests": Playground.tests,
    "/api/route": Playground.route,
    "/api/save": Playground.save,
}


def _static(name: str) -> bytes:
    return (resources.files("visiongate.playground") / "static" / name).read_bytes()


def bind(playground: Playground, port: int = 0, host: str = "127.0.0.1") -> _Server:
    """A server on loopback (`port` 0: a free one), not yet serving."""
    server = _Server((host, port), _Handler)
    bound = server.server_address[1]
    origins = [f"http://{name}:{bound}" for name in ("127.0.0.1", "localhost", "[::1]")]
    server.playground = playground
    server.checks = Checks.build(host, None, origins, [])
    return server


def address(server: _Server) -> str:
    """The page's address, with the token."""
    host, port = str(server.server_address[0]), server.server_address[1]
    return f"http://{host}:{port}/?token={server.playground.token}"
