"""Warm test servers and proxies: one fork server per test process, so that the example
server or the proxy a test starts does not import the MCP SDK or visiongate again (issue 38).

    python -S tests/_warm.py SOCKET -- PROGRAM ARGS...   # the stand-in a test starts
    python -P tests/_warm_server.py SOCKET PARENT        # the fork server

The example server's start is mostly `import mcp`: about 1.2 s of CPU (550 pydantic models),
over a hundred times a suite; a proxy's, its own imports (about 0.3 s, 150 times).
`server_command()` gives a test the command of a *stand-in*, a stdlib-only script that starts
in milliseconds: it hands its standard streams, environment, working directory and argv to
the fork server of its test process, which has imported the programs' modules once and forks a
child that runs the real command's module or script as `__main__` on those streams. The
stand-in forwards every signal it is sent to that child and ends as the child ended (its exit
code, or killed by the same signal); the child dies with the stand-in when the stand-in is
killed outright (SIGKILL, as a process group is). So the MCP server a proxy or an SDK client
talks to, or the proxy a client talks to, is the real one, over real pipes; only the cost of
its imports is shared. Tests about starting and ending a server or a proxy (its imports, its
signals, Ctrl-C, its process group) keep the real command. When no fork server runs (a
fast-subset run, or before the first slow test), or when the command is given an interpreter
setting the fork server did not start with (`PYTHONPATH`, ...), the stand-in `exec`s the real
command instead.

A child's `/proc` entry shows the fork server's command line and start-up environment, which
holds the test process's token: a child left running is still found by `_leftovers`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

FORWARDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
"""The signals a stand-in passes on to its server (by name: not every platform has all)."""


def _stand_in(path: str, argv: list[str]) -> None:
    """Run `argv` through the fork server at `path`, or `exec` it when there is none."""
    signals = [getattr(signal, name) for name in FORWARDED if hasattr(signal, name)]
    ignored = [int(number) for number in signals if signal.getsignal(number) == signal.SIG_IGN]
    child: list[int] = []
    pending: list[int] = []

    def forward(number: int, _frame: object) -> None:
        if not child:
            pending.append(number)
            return
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile: its status follows
            os.kill(child[0], number)

    for number in signals:
        if number not in ignored:
            signal.signal(number, forward)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
    except OSError:
        os.execv(argv[0], argv)  # no fork server here: the real command, as it is
    request = {
        "argv": argv,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "umask": os.umask(0o022),
        "ignored": ignored,
        "pid": os.getpid(),
    }
    os.umask(request["umask"])
    data = json.dumps(request).encode() + b"\n"
    sent = socket.send_fds(connection, [data], [0, 1, 2])
    if sent < len(data):  # nothing left to send: the fork server may have answered and closed
        connection.sendall(data[sent:])
    replies = connection.makefile("rb")
    started = replies.readline()
    if not started:
        sys.stderr.write("_warm.py: the fork server closed the connection\n")
        os._exit(70)
    if started == b"exec\n":  # an interpreter setting of its own: the real command
        connection.close()
        os.execv(argv[0], argv)
    child.append(int(started))
    for number in pending:
        forward(number, None)
    ended = replies.readline().split()
    if len(ended) != 2:
        sys.stderr.write("_warm.py: the fork server ended before the server did\n")
        os._exit(70)
    how, value = ended[0].decode(), int(ended[1])
    if how == "signal":
        signal.signal(value, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [value])
        os.kill(os.getpid(), value)
        value = 128 + value
    os._exit(value)


if __name__ == "__main__":
    _stand_in(sys.argv[1], sys.argv[3:])


# Everything below runs in the test process (`server_command`), or is read by the fork server
# (`_warm_server`): the stand-in above never gets here.

import subprocess  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Final, TypeVar  # noqa: E402

TESTS: Final = Path(__file__).resolve().parent
MODULES: Final = ("visiongate.adapters.mcp.example_server", "visiongate")
"""Servers run as `python [-P] -m MODULE` (`visiongate`: a proxy in front of a server)."""
PRELOADED: Final = (
    *("visiongate._entry", "visiongate.kernel._noted", "visiongate.kernel._exit"),
    *("visiongate.cli._signals", "visiongate.cli._stdout", "visiongate.cli.proxy._gateway"),
    *("visiongate.engine.facts.registry._load", "visiongate.engine.facts._resolver"),
    *("visiongate.engine._policy_schema", "visiongate.engine._yaml._parse", "visiongate.policies"),
    *("visiongate.adapters._router", "visiongate.adapters.proxy._calls"),
    *("visiongate.adapters.proxy.relay", "visiongate.adapters.proxy.clients._config"),
)
"""What a proxy imports, lazily too (one left out costs time, not correctness)."""
STARTUP: Final = ("PYTHONUNBUFFERED", "PYTHONFAULTHANDLER")
"""The `PYTHON*` settings a child takes up itself; a request with any other that the fork
server's start did not have gets the real command (`PYTHONPATH`, `PYTHONWARNINGS`, ...)."""
SCRIPTS: Final = (TESTS / "_hostile_mcp.py",)
"""Servers run as `python SCRIPT` (their folder first on `sys.path`)."""

SUPPORTED: Final = hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")
"""Linux (a pidfd tells a child its stand-in is gone): elsewhere the real commands are used."""

_server: dict[str, Any] = {}
_helpers: list[Callable[..., list[str]]] = []
Helper = TypeVar("Helper", bound=Callable[..., list[str]])


def server_command(real: list[str] | None = None) -> list[str]:
    """The stand-in's command for `real` (the example server's by default)."""
    if real is None:
        from visiongate.adapters.mcp.example_server import server_command as example

        real = example()
    if _program(real) is None:
        raise ValueError(f"not a server the fork server holds: {real}")
    if not SUPPORTED:
        return real
    if "socket" not in _server:
        folder = tempfile.mkdtemp(prefix="vg-warm-")
        _server["socket"] = os.path.join(folder, "socket")
    return [sys.executable, "-S", "-P", __file__, _server["socket"], "--", *real]


def hostile_command() -> list[str]:
    """The stand-in's command for the hostile server (`_hostile_mcp.server_command()`)."""
    return server_command([sys.executable, str(SCRIPTS[0])])


def _program(argv: list[str]) -> tuple[str, str, list[str]] | None:
    """("module", name, arguments) or ("script", path, arguments) for a command the fork
    server can run, or None."""
    if not argv or argv[0] != sys.executable:
        return None
    rest = argv[1:]
    if rest[:1] == ["-P"]:
        rest = rest[1:]
    if rest[:1] == ["-m"] and rest[1:2] and rest[1] in MODULES:
        return ("module", rest[1], rest[2:])
    if rest[:1] and Path(rest[0]).resolve() in SCRIPTS:
        return ("script", str(Path(rest[0]).resolve()), rest[1:])
    return None


def hands_out(helper: Helper) -> Helper:
    """Mark a helper that returns stand-ins' commands, so the modules using it are seen."""
    _helpers.append(helper)
    return helper


def wanted_by(module: object) -> bool:
    """Whether a test module uses a stand-in's command (so its tests want the fork server):
    `server_command`, `hostile_command`, or a helper marked by `hands_out`."""
    mine = {id(helper) for helper in (server_command, hostile_command, *_helpers)}
    return any(id(value) in mine for value in vars(module).values())


def start() -> None:
    """Start this process's fork server, once (the slow tests' setup calls it)."""
    if "process" in _server or not SUPPORTED:
        return
    server_command()  # picks the socket's path
    os.makedirs(os.path.dirname(_server["socket"]), mode=0o700, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-P", str(TESTS / "_warm_server.py"), _server["socket"], str(os.getpid())],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    if process.stdout.readline() != b"ready\n":
        process.kill()
        process.wait()
        process.stdout.close()
        raise RuntimeError(f"the fork server did not start (exit {process.returncode})")
    _server["process"] = process


def stop() -> None:
    """Stop the fork server (the servers it started run on until they end)."""
    process = _server.pop("process", None)
    if process is not None:
        process.terminate()
        process.wait()
        process.stdout.close()
        path = _server["socket"]  # kept: the commands handed out name it
        Path(path).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(path))
