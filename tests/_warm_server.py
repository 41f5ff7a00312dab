"""The fork server of the warm test servers (`_warm`), and what its children do before they
become the program a stand-in asked for (issue 38).

    python -P tests/_warm_server.py SOCKET PARENT

It imports the programs' modules once (`_preload`), serves the stand-ins of its test process
`PARENT` on the Unix socket `SOCKET`, and ends when that process does. A child takes the
stand-in's streams, environment, folder and signal dispositions, and the exit handlers in a
real process's order, then runs the program as `__main__`.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `-P`: the children's path stays real
from _warm import MODULES, PRELOADED, SCRIPTS, STARTUP, TESTS, _program

sys.path.pop(0)

_exit_handlers: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
"""The exit handlers the fork server's imports registered (`_preload`)."""


def _serve(path: str, parent: int) -> dict[str, Any] | None:
    """The fork server's loop; returns a request only in a child, which then runs it."""
    # Python's fork recipe (`gc.freeze`): no collection while the modules load, then every
    # object they made is frozen, so a child's collections never walk (and copy on write) the
    # heap it shares: 60 ms of CPU less per warm proxy here, and its system time.
    gc.disable()
    _preload()
    gc.freeze()
    own = _settings(os.environ)
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
            if _settings(request["env"]) != own:
                for descriptor in request["fds"]:
                    os.close(descriptor)
                with contextlib.suppress(OSError):
                    connection.sendall(b"exec\n")
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
                gc.enable()
                return request
            for descriptor in request["fds"]:
                os.close(descriptor)
            with contextlib.suppress(OSError):  # the stand-in is gone: the child sees it, ends
                connection.sendall(f"{pid}\n".encode())
            waiting[pid] = connection


def _preload() -> None:
    """Import what the children run, noting the exit handlers those imports register."""
    register = atexit.register

    def noted(function: Any, *args: Any, **kwargs: Any) -> Any:
        _exit_handlers.append((function, args, kwargs))
        return register(function, *args, **kwargs)

    atexit.register = noted
    sys.path.insert(0, str(TESTS))
    try:
        for module in (*MODULES, *PRELOADED, *(script.stem for script in SCRIPTS)):
            importlib.import_module(module)
    finally:
        atexit.register = register
        sys.path.remove(str(TESTS))
    from visiongate.adapters.mcp._example_pictures import screenshot_png

    screenshot_png()  # cached: every child has it (about 0.3 s of a server's first call)


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


def _settings(environment: Any) -> dict[str, str]:
    """The interpreter's start-up settings in `environment` that a child cannot take up."""
    return {
        name: value
        for name, value in environment.items()
        if name.startswith("PYTHON") and name not in STARTUP
    }


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
    if request["env"].get("PYTHONFAULTHANDLER"):
        faulthandler.enable()
    _exit_in_order()
    _die_with(request["pid"])
    program = _program(request["argv"])
    assert program is not None  # the test process only hands out commands it holds
    kind, target, arguments = program
    sys.argv = [target if kind == "script" else "-m", *arguments]
    return kind, target


def _exit_in_order() -> None:
    """The exit handlers in a real process's order: the program's `skip_teardown` first (it
    registers before its imports, so that it runs last), then those of the imports the fork
    server made for it."""
    atexit._clear()
    for function, args, kwargs in _exit_handlers:  # a program without `skip_teardown`
        atexit.register(function, *args, **kwargs)
    from visiongate.kernel import _exit

    skip_teardown = _exit.skip_teardown

    def registered_first() -> None:
        for function, _, _ in _exit_handlers:
            atexit.unregister(function)
        skip_teardown()
        for function, args, kwargs in _exit_handlers:
            atexit.register(function, *args, **kwargs)

    _exit.skip_teardown = registered_first  # type: ignore[assignment]


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
    name = target if kind == "module" else Path(target).stem
    if not hasattr(sys.modules.get(name), "__path__"):  # a package runs its `__main__`
        sys.modules.pop(name, None)
    if kind == "module":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(target))
        runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    request = _serve(sys.argv[1], int(sys.argv[2]))
    if request is not None:
        _run(_become(request))
