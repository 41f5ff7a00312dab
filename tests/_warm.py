"""Warm MCP test servers: one fork server per test process, so that the example server a test
starts over stdio does not import the MCP SDK again (issue 38).

    python -S tests/_warm.py SOCKET -- PROGRAM ARGS...   # the stand-in a test starts
    python -P tests/_warm.py --serve SOCKET PARENT       # the fork server

The example server's start is mostly `import mcp`: about 1.2 s of CPU (550 pydantic models),
over a hundred times a suite. `server_command()` gives a test the command of a *stand-in*,
a stdlib-only script that starts in milliseconds: it hands its standard streams, environment,
working directory and argv to the fork server of its test process, which has imported the
server's modules once and forks a child that runs the real command's module or script as
`__main__` on those streams. The stand-in forwards every signal it is sent to that child and
ends as the child ended (its exit code, or killed by the same signal); the child dies with the
stand-in when the stand-in is killed outright (SIGKILL, as a process group is). So the MCP
server a proxy or an SDK client talks to is the real one, over real pipes; only the cost of
its imports is shared. Tests about starting and ending a server keep the real command
(`example_server.server_command()`). When no fork server runs (a fast-subset run, or before
the first slow test), the stand-in `exec`s the real command instead.

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
    connection.sendall(data[sent:])
    replies = connection.makefile("rb")
    started = replies.readline()
    if not started:
        sys.stderr.write("_warm.py: the fork server closed the connection\n")
        os._exit(70)
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


if __name__ == "__main__" and sys.argv[1:2] != ["--serve"]:
    _stand_in(sys.argv[1], sys.argv[3:])


# Everything below runs in the test process (`server_command`) or in the fork server: the
# stand-in above never gets here.

import io  # noqa: E402
import runpy  # noqa: E402
import selectors  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Final  # noqa: E402

TESTS: Final = Path(__file__).resolve().parent
MODULES: Final = ("visiongate.adapters.mcp.example_server",)
"""Servers run as `python [-P] -m MODULE`."""
SCRIPTS: Final = (TESTS / "_hostile_mcp.py",)
"""Servers run as `python SCRIPT` (their folder first on `sys.path`)."""

SUPPORTED: Final = hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")
"""Linux (a pidfd tells a child its stand-in is gone): elsewhere the real commands are used."""

_server: dict[str, Any] = {}


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


def _program(argv: list[str]) -> tuple[str, str] | None:
    """("module", name) or ("script", path) for a command the fork server can run, or None."""
    if not argv or argv[0] != sys.executable:
        return None
    rest = argv[1:]
    if rest[:1] == ["-P"]:
        rest = rest[1:]
    if rest[:1] == ["-m"] and rest[1:2] and rest[1] in MODULES:
        return ("module", rest[1])
    if rest[:1] and Path(rest[0]).resolve() in SCRIPTS:
        return ("script", str(Path(rest[0]).resolve()))
    return None


def wanted_by(module: object) -> bool:
    """Whether a test module uses a stand-in's command (so its tests want the fork server)."""
    mine = (server_command, hostile_command)
    return any(value in mine for value in vars(module).values())


def start() -> None:
    """Start this process's fork server, once (the slow tests' setup calls it)."""
    if "process" in _server or not SUPPORTED:
        return
    server_command()  # picks the socket's path
    os.makedirs(os.path.dirname(_server["socket"]), mode=0o700, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-P", __file__, "--serve", _server["socket"], str(os.getpid())],
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


def _serve(path: str, parent: int) -> dict[str, Any] | None:
    """The fork server's loop; returns a request only in a child, which then runs it."""
    sys.path.insert(0, str(TESTS))
    for module in MODULES:
        __import__(module)
    for script in SCRIPTS:
        __import__(script.stem)
    from visiongate.adapters.mcp._example_pictures import screenshot_png

    screenshot_png()  # cached: every child has it (about 0.3 s of a server's first call)
    sys.path.remove(str(TESTS))
    assert threading.active_count() == 1, "a fork server forks with one thread only"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    parent_gone = os.pidfd_open(parent)
    waiting: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_read, selectors.EVENT_READ, "reap")
    selector.register(parent_gone, selectors.EVENT_READ, "parent")
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.data == "parent":
                return None
            if key.data == "reap":
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_read, 512):
                        pass
                _reap(waiting)
                continue
            connection, _ = listener.accept()
            request = _read_request(connection)
            if request is None:
                connection.close()
                continue
            pid = os.fork()
            if pid == 0:
                selector.close()
                for descriptor in (wake_read, wake_write, parent_gone):
                    os.close(descriptor)
                for other in (listener, *waiting.values()):
                    other.close()
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                connection.close()
                return request
            for descriptor in request["fds"]:
                os.close(descriptor)
            with contextlib.suppress(OSError):  # the stand-in is gone: the child sees it, ends
                connection.sendall(f"{pid}\n".encode())
            waiting[pid] = connection


def _read_request(connection: socket.socket) -> dict[str, Any] | None:
    """A stand-in's request and its three streams, or None (what came is closed)."""
    connection.settimeout(10)
    fds: list[int] = []
    try:
        data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
        while not data.endswith(b"\n"):
            more = connection.recv(1 << 20)
            if not more:
                raise ValueError("the request ended early")
            data += more
        request: dict[str, Any] = json.loads(data)
        if len(fds) != 3:
            raise ValueError("a request comes with three streams")
    except (OSError, ValueError):
        for descriptor in fds:
            os.close(descriptor)
        return None
    request["fds"] = fds
    return request


def _reap(waiting: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = waiting.pop(pid, None)
        if connection is None:
            continue
        if os.WIFSIGNALED(status):
            reply = f"signal {os.WTERMSIG(status)}\n"
        else:
            reply = f"exit {os.waitstatus_to_exitcode(status)}\n"
        with contextlib.suppress(OSError):
            connection.sendall(reply.encode())
        connection.close()


def _become(request: dict[str, Any]) -> tuple[str, str]:
    """In the child: take the stand-in's streams, environment, folder and signals."""
    for target, descriptor in enumerate(request["fds"]):
        os.dup2(descriptor, target)
        os.close(descriptor)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    for number in request["ignored"]:
        signal.signal(number, signal.SIG_IGN)
    if signal.SIGINT not in request["ignored"]:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    unbuffered = bool(request["env"].get("PYTHONUNBUFFERED"))
    sys.stdin = sys.__stdin__ = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(  # noqa: SIM115
        1, "w", buffering=1 if unbuffered else -1, closefd=False
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        open(2, "wb", buffering=0, closefd=False),  # noqa: SIM115
        errors="backslashreplace",
        line_buffering=True,
    )
    _die_with(request["pid"])
    program = _program(request["argv"])
    assert program is not None  # the test process only hands out commands it holds
    sys.argv = [program[1] if program[0] == "script" else "-m", *_arguments(request["argv"])]
    return program


def _arguments(argv: list[str]) -> list[str]:
    rest = argv[1:]
    if rest[:1] == ["-P"]:
        rest = rest[1:]
    return rest[2:] if rest[:1] == ["-m"] else rest[1:]


def _die_with(pid: int) -> None:
    """End this child when the stand-in `pid` ends (killed outright, it cannot forward)."""
    try:
        watched = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)

    def watch() -> None:
        select_one = selectors.DefaultSelector()
        select_one.register(watched, selectors.EVENT_READ)
        select_one.select()
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="stand-in watch", daemon=True).start()


def _run(program: tuple[str, str]) -> None:
    kind, target = program
    # As in `python -m`/`python SCRIPT`, the program is only `__main__` (its copy imported by
    # the fork server would also make runpy warn on stderr).
    sys.modules.pop(target if kind == "module" else Path(target).stem, None)
    if kind == "module":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(target))
        runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    request = _serve(sys.argv[2], int(sys.argv[3]))
    if request is not None:
        _run(_become(request))
