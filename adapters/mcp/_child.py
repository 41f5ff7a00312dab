"""Starting and stopping the MCP servers this project runs: the one home for child processes.

Every server (`visiongate proxy`'s upstream, `visiongate mcp call`'s) is started here, with
pipes for its stdin, stdout and stderr, and stopped here, whatever happened:

- **POSIX**: the server runs in a session (and so a process group) of its own, out of reach
  of the terminal's Ctrl-C. Stopping closes its stdin, waits `grace`, sends SIGTERM to the
  whole group, waits `grace`, sends SIGKILL to the group, and does so even when the server
  itself has exited but left children in its group. Because a process killed with SIGKILL
  (by a desktop client, the OOM killer) runs no clean-up, each server also gets a
  **watchdog**: a `/bin/sh` in a session of its own, holding the read end of a pipe whose
  only write end this process holds. When this process dies, however it dies, the pipe
  reaches end-of-file and the watchdog sends SIGTERM, then SIGKILL after `grace`, to the
  server's group. It ignores SIGTERM and SIGINT itself; a normal stop ends it.
- **Elsewhere** (Windows): no process groups nor `/bin/sh`. The server is started in a new
  process group (`CREATE_NEW_PROCESS_GROUP`) and stopped with `terminate()`, then `kill()`;
  its own children and a hard kill of this process are not covered there.

Its stderr is relayed line by line (`relay_stderr`) through the strict sanitizer, each line
clipped. `spawn` is synchronous and fast (a fork and an exec), so a command can start the server
before it imports and loads the rest, and the server boots meanwhile.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TextIO

from visiongate.kernel._errors import VisiongateError

if TYPE_CHECKING:
    import asyncio

# What only a running session needs (asyncio, the pipes, the sanitizer) is imported there:
# `visiongate proxy` starts its server before it imports anything else.

__all__ = [
    "DEFAULT_GRACE_S",
    "POSIX_GROUPS",
    "Child",
    "SpawnError",
    "relay_stderr",
    "server_label",
    "spawn",
    "start_server",
]

DEFAULT_GRACE_S: Final = 2.0
"""How long a server gets to exit after stdin closes, and again after SIGTERM."""
POSIX_GROUPS: Final = hasattr(os, "killpg") and os.path.exists("/bin/sh")
_NEW_GROUP: Final = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) if not POSIX_GROUPS else 0
_POLL_S: Final = 0.01
_EXIT_POLL_S: Final = 0.05
_LAST_OUTPUT_S: Final = 0.2
_STDERR_LINE_CHARS: Final = 2_000
_LABEL_CHARS: Final = 80
_KILL: Final = getattr(signal, "SIGKILL", signal.SIGTERM)
_WATCHDOG: Final = (
    'trap "" TERM INT HUP; read line; kill -TERM "-$1" 2>/dev/null || exit 0; '
    'sleep "$2"; kill -KILL "-$1" 2>/dev/null'
)
"""The watchdog's script: wait for end-of-file on stdin, then stop the group `$1`."""


class SpawnError(VisiongateError, OSError):
    """The server could not be started; the message names the command and says why."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


@dataclass
class Child:
    """A running server and, on POSIX, its watchdog."""

    process: subprocess.Popen[bytes]
    label: str
    watchdog: subprocess.Popen[bytes] | None = None
    leash: int | None = field(default=None, repr=False)
    """The write end of the watchdog's pipe: closing it (or dying) sets the watchdog off."""
    _transports: dict[str, asyncio.BaseTransport] = field(default_factory=dict, repr=False)
    """The event loop's transports over the pipes, once made: they own the files then."""
    _exit_watch: asyncio.Future[None] | None = field(default=None, repr=False)

    async def stdout(self) -> asyncio.StreamReader:
        """The server's standard output, read by the event loop. It ends when the server
        exits (after `_LAST_OUTPUT_S` for what it wrote last), even if a process it started
        still holds the pipe open."""
        import asyncio

        reader = await self._reader("stdout")
        self._exit_watch = asyncio.ensure_future(self._end_output_at_exit())
        return reader

    async def _end_output_at_exit(self) -> None:
        import asyncio

        while self.process.poll() is None:
            await asyncio.sleep(_EXIT_POLL_S)
        await asyncio.sleep(_LAST_OUTPUT_S)
        self._close("stdout")

    async def stderr(self) -> asyncio.StreamReader:
        return await self._reader("stderr")

    async def stdin(self) -> asyncio.StreamWriter:
        """The server's standard input, written by the event loop."""
        from ._pipes import pipe_writer

        assert self.process.stdin is not None
        writer = await pipe_writer(self.process.stdin)  # type: ignore[arg-type]
        self._transports["stdin"] = writer.transport
        return writer

    async def _reader(self, name: str) -> asyncio.StreamReader:
        from ._pipes import pipe_reader

        file = getattr(self.process, name)
        assert file is not None
        reader, transport = await pipe_reader(file)
        self._transports[name] = transport
        return reader

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    async def exit_status(self, wait_s: float = 0.5) -> int | None:
        """The exit status, waiting up to `wait_s` for a process that is closing."""
        await self._exited_within(wait_s)
        return self.process.returncode

    async def stop(self, grace: float = DEFAULT_GRACE_S) -> None:
        """Close stdin, wait `grace`, SIGTERM the group, wait `grace`, SIGKILL the group."""
        self._close("stdin")
        for next_signal in (signal.SIGTERM, _KILL):
            if await self._gone_within(grace):
                break
            self._signal(next_signal)
        await self._gone_within(grace)
        self._release()

    def kill(self) -> None:
        """SIGKILL the group now and reap: the last resort when no event loop is left."""
        self._close("stdin")
        self._signal(_KILL)
        with suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=DEFAULT_GRACE_S)
        self._release()

    async def _exited_within(self, seconds: float) -> bool:
        return await _polled(lambda: self.process.poll() is not None, seconds)

    async def _gone_within(self, seconds: float) -> bool:
        """Whether the server and every process left in its group are gone within `seconds`."""
        return await _polled(
            lambda: self.process.poll() is not None and not self._group_alive(), seconds
        )

    def _group_alive(self) -> bool:
        if not POSIX_GROUPS:
            return False
        try:
            os.killpg(self.process.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _signal(self, signum: int) -> None:
        with suppress(ProcessLookupError, PermissionError, OSError):
            if POSIX_GROUPS:
                os.killpg(self.process.pid, signum)
            elif self.process.poll() is None:
                self.process.terminate() if signum == signal.SIGTERM else self.process.kill()

    def _release(self) -> None:
        """The server is gone: end the watchdog (quietly) and close what is left."""
        if self._exit_watch is not None:
            self._exit_watch.cancel()
        if self.watchdog is not None:
            with suppress(OSError):
                self.watchdog.kill()
            with suppress(subprocess.TimeoutExpired):
                self.watchdog.wait(timeout=DEFAULT_GRACE_S)
            self.watchdog = None
        if self.leash is not None:
            with suppress(OSError):
                os.close(self.leash)
            self.leash = None
        self._close("stdout")
        self._close("stderr")

    def _close(self, name: str) -> None:
        transport = self._transports.pop(name, None)
        if transport is None:
            _close(getattr(self.process, name))
            return
        if transport.is_closing():
            return
        import asyncio

        with suppress(RuntimeError):  # the event loop is already closed
            if isinstance(transport, asyncio.WriteTransport):
                transport.abort()  # nothing buffered for a server being stopped is wanted
            else:
                transport.close()


def server_label(command: Sequence[str]) -> str:
    """The server's command line as error messages name it: the program's file name and the
    arguments, cleaned and short."""
    from ..sanitize._line import untrusted_line

    program, *arguments = command
    return untrusted_line(shlex.join([os.path.basename(program), *arguments]), _LABEL_CHARS)


def spawn(
    command: Sequence[str],
    *,
    label: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Child:
    """Start `command` with pipes, in a group of its own, watched (see the module docstring).
    Raises `SpawnError` naming the server (`label`, else `server_label`) when it cannot be
    started."""
    if not command:
        raise SpawnError("no server command given (put it after `--`)")
    try:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            bufsize=0,
            start_new_session=POSIX_GROUPS,
            creationflags=_NEW_GROUP,
        )
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        reason = reason[:1].lower() + reason[1:]
        named = label or server_label(command)
        raise SpawnError(f"cannot start the MCP server `{named}`: {reason}", reason) from None
    child = Child(process, label or server_label(command))
    if POSIX_GROUPS:
        child.watchdog, child.leash = _watch(process.pid)
    return child


def start_server(command: Sequence[str]) -> Child | SpawnError:
    """Start a server now, labelled by its command line; the error if it cannot be."""
    try:
        return spawn(command)
    except SpawnError as error:
        return error


def _watch(group: int) -> tuple[subprocess.Popen[bytes] | None, int | None]:
    """Start the watchdog for `group`; (None, None) if it cannot be (the server still runs)."""
    read_end, write_end = os.pipe()  # both close-on-exec: no other child inherits them
    try:
        watchdog = subprocess.Popen(
            ["/bin/sh", "-c", _WATCHDOG, "visiongate-watchdog", str(group), f"{DEFAULT_GRACE_S:g}"],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        os.close(write_end)
        return None, None
    finally:
        os.close(read_end)
    return watchdog, write_end


async def _polled(done: Callable[[], bool], seconds: float) -> bool:
    # Polled, not awaited on the pipes: a grandchild that inherited them can hold them open
    # after the server itself has exited.
    import asyncio

    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        await asyncio.sleep(_POLL_S)
    return done()


async def relay_stderr(child: Child, sink: TextIO | None) -> None:
    """The server's stderr, line by line, each cleaned and clipped, to `sink`."""
    from ._pipes import chunks

    reader = await child.stderr()
    pending = b""
    async for chunk in chunks(reader):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            _show(line, sink)
        # A line with no end in sight is shown in pieces, so memory stays bounded.
        if len(pending) > _STDERR_LINE_CHARS:
            _show(pending, sink)
            pending = b""
    if pending:
        _show(pending, sink)


def _show(line: bytes, sink: TextIO | None) -> None:
    from ..sanitize._line import untrusted_line

    text = untrusted_line(line.decode("utf-8", "replace"), _STDERR_LINE_CHARS)
    if text and sink is not None:
        print(text, file=sink, flush=True)


def _close(stream: object) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        with suppress(OSError, ValueError):
            close()
