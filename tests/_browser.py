"""A real headless Chromium driven over the DevTools protocol, for looking at pictures as people do.

No driver package: Chromium speaks the protocol over a pair of pipes
(`--remote-debugging-pipe`: it reads commands on fd 3 and writes answers and events on fd 4,
each message JSON ended by a NUL byte), so the standard library is enough, and nothing is
downloaded (Playwright's own browser download cannot run here; Debian's `chromium` is
installed by `.ci/run`). A page load reports what a person's console would show: console
errors and warnings, uncaught exceptions, and browser log errors (a blocked load, a
Content-Security-Policy violation), and every URL the page requested.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
TIMEOUT: Final = 60.0


def find_chromium() -> str | None:
    """Debian's `chromium` (or `$VISIONGATE_CHROMIUM`), if installed."""
    named = os.environ.get("VISIONGATE_CHROMIUM")
    if named:
        return named
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    """The browser ended, answered with an error, or did not answer in time."""


@dataclass
class Page:
    """One loaded page: what its console said, what it requested, and a way to ask it more."""

    browser: Browser
    session: str
    url: str
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    """Every URL the page asked for, loaded or not."""
    blocked: list[str] = field(default_factory=list)
    """URLs the browser refused to load (`csp`, `mixed-content`, ...), with the reason."""
    request_urls: dict[str, str] = field(default_factory=dict)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serializable)."""
        answer = self.browser.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self.session
        )
        if "exceptionDetails" in answer:
            raise BrowserError(f"`{expression[:60]}` threw: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """The whole page (not only the viewport) as a PNG."""
        metrics = self.browser.call("Page.getLayoutMetrics", {}, self.session)
        size = metrics["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = self.browser.call(
            "Page.captureScreenshot",
            {"format": "png", "clip": clip, "captureBeyondViewport": True},
            self.session,
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def print_pdf(self, path: Path) -> bytes:
        """The page as the browser prints it (print styles applied), saved as a PDF."""
        printed = self.browser.call("Page.printToPDF", {"printBackground": False}, self.session)
        data = base64.b64decode(printed["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return data

    def emulate_print(self) -> None:
        self.browser.call("Emulation.setEmulatedMedia", {"media": "print"}, self.session)

    def close(self) -> None:
        target = self.browser.targets.pop(self.session, None)
        if target is not None:
            self.browser.call("Target.closeTarget", {"targetId": target})


class Browser:
    """A Chromium process with a fresh profile; `load` opens pages in new tabs."""

    def __init__(self, executable: str, width: int = 1440, height: int = 900) -> None:
        self.profile = tempfile.TemporaryDirectory(prefix="vg-chromium-")
        self.width, self.height = width, height
        self.targets: dict[str, str] = {}
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        log = Path(self.profile.name) / "chromium.log"
        self._log = log.open("wb")
        # Chromium wants the pipes as fds 3 and 4. Move them above 10 first, so that the
        # shell's `3<&` and `4>&` cannot overwrite one with the other, then let bash (dash
        # takes no fd above 9) put them in place and exec the browser (no `preexec_fn`,
        # which is unsafe in a process with threads).
        high_read = fcntl.fcntl(commands_read, fcntl.F_DUPFD_CLOEXEC, 10)
        high_write = fcntl.fcntl(answers_write, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (commands_read, answers_write):
            os.close(fd)
        command = [
            executable,
            *FLAGS,
            f"--user-data-dir={self.profile.name}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{high_read} 4>&{high_write}', "bash", *command],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            pass_fds=(high_read, high_write),
        )
        os.close(high_read)
        os.close(high_write)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                self.call("Browser.close", timeout=10)
                self.process.wait(10)
        except (BrowserError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(10)
        finally:
            for fd in (self._commands, self._answers):
                with contextlib.suppress(OSError):  # already closed by an earlier close()
                    os.close(fd)
            self._log.close()
            self.profile.cleanup()

    def log_tail(self) -> str:
        text = (Path(self.profile.name) / "chromium.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-20:])

    def _send(self, method: str, params: dict[str, Any], session: str | None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        try:
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        except BrokenPipeError as error:
            raise BrowserError(f"chromium ended:\n{self.log_tail()}") from error
        return self._next_id

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise BrowserError("chromium did not answer in time")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium ended:\n{self.log_tail()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = TIMEOUT,
    ) -> dict[str, Any]:
        """Send a command and wait for its answer; events that arrive meanwhile are kept."""
        number = self._send(method, params or {}, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == number:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._events.append(message)

    def _wait_for(self, session: str, event: str, page: Page) -> None:
        deadline = time.monotonic() + TIMEOUT
        while True:
            while self._events:
                message = self._events.pop(0)
                if message.get("sessionId") == session:
                    _record(page, message)
                    if message.get("method") == event:
                        return
            self._events.append(self._receive(deadline))

    def load(self, url: str) -> Page:
        """Open `url` in a new tab and wait for its load event, recording what it reports."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.targets[session] = target
        page = Page(self, session, url)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", {}, session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        self.call("Page.navigate", {"url": url}, session)
        self._wait_for(session, "Page.loadEventFired", page)
        # Give late console messages of the load (a deferred error) a moment to arrive.
        self.call("Runtime.evaluate", {"expression": "1"}, session)
        self._drain(session, page)
        return page

    def _drain(self, session: str, page: Page) -> None:
        kept = []
        for message in self._events:
            if message.get("sessionId") == session:
                _record(page, message)
            else:
                kept.append(message)
        self._events = kept


def _record(page: Page, message: dict[str, Any]) -> None:
    method, params = message.get("method"), message.get("params", {})
    if method == "Runtime.consoleAPICalled":
        words = " ".join(
            str(arg.get("value", arg.get("description", ""))) for arg in params["args"]
        )
        if params["type"] in ("error", "assert"):
            page.errors.append(f"console.{params['type']}: {words}")
        elif params["type"] == "warning":
            page.warnings.append(f"console.warn: {words}")
    elif method == "Runtime.exceptionThrown":
        details = params["exceptionDetails"]
        description = details.get("exception", {}).get("description", details.get("text"))
        page.errors.append(f"uncaught: {description}")
    elif method == "Log.entryAdded":
        entry = params["entry"]
        if entry["level"] == "error":
            page.errors.append(f"log ({entry['source']}): {entry['text']}")
        elif entry["level"] == "warning":
            page.warnings.append(f"log ({entry['source']}): {entry['text']}")
    elif method == "Network.requestWillBeSent":
        page.requests.append(params["request"]["url"])
        page.request_urls[params["requestId"]] = params["request"]["url"]
    elif method == "Network.loadingFailed" and params.get("blockedReason"):
        url = page.request_urls.get(params["requestId"], "?")
        page.blocked.append(f"{url} ({params['blockedReason']})")
