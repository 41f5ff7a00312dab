"""Make this Python look like Windows to visiongate's own code: POSIX-only parts hidden.

Installed by a `sitecustomize.py` (`test_platform.py` writes one), so the compile worker and
every other child process get it too. For imports made by visiongate's modules (by module
name, or by file under `VISIONGATE_HIDE_ROOTS`):

- `fcntl`, `termios`, `resource`, `pty`, `tty`, `grp`, `pwd`, `posix` do not exist;
- `select` has no `poll`/`epoll`/`kqueue`/`devpoll`, and its `select()` takes sockets only;
- `os` and `signal` lack what Windows' lack (`getuid`, `killpg`, `setsid`, `fork`, `SIGKILL`).

The standard library and third-party packages keep the real modules: their own Windows
branches are not what is being tested. Each hidden thing visiongate asked for is appended to
the file `VISIONGATE_HIDE_LOG` names, so a test can tell that a fallback was taken.
"""

from __future__ import annotations

import builtins
import os
import select
import signal
import stat
import types
from typing import Any

HIDDEN_MODULES = frozenset({"fcntl", "termios", "resource", "pty", "tty", "grp", "pwd", "posix"})
HIDDEN_ATTRIBUTES = {
    "os": frozenset({
        "getuid", "geteuid", "getgid", "getegid", "getgroups", "setuid", "setgid", "setsid",
        "setpgrp", "getpgid", "getpgrp", "killpg", "fork", "forkpty", "register_at_fork",
        "sched_getaffinity", "getloadavg", "pread", "pwrite", "mkfifo", "WNOHANG", "O_NONBLOCK",
        "uname", "nice", "chown", "fchown", "lchown", "statvfs", "sysconf", "pipe2", "wait3",
        "wait4", "posix_spawn", "posix_spawnp", "openpty", "ttyname",
    }),
    "signal": frozenset({
        "SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGCHLD",
        "SIGCONT", "SIGSTOP", "SIGTSTP", "alarm", "setitimer", "getitimer", "pause",
        "pthread_kill", "pthread_sigmask", "siginterrupt", "sigwait", "sigpending",
    }),
    "select": frozenset({"poll", "epoll", "kqueue", "kevent", "devpoll"}),
}  # fmt: skip
WSAENOTSOCK = 10038

_real_import = builtins.__import__
_roots: tuple[str, ...] = ()


def _note(what: str) -> None:
    log = os.environ.get("VISIONGATE_HIDE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as stream:
            stream.write(f"{what}\n")


def _ours(globals_: Any) -> bool:
    if not isinstance(globals_, dict):
        return False
    name = str(globals_.get("__name__") or "")
    file = str(globals_.get("__file__") or "")
    return name.split(".")[0] == "visiongate" or (bool(file) and file.startswith(_roots))


def _select_sockets_only(rlist: Any, wlist: Any, xlist: Any, timeout: Any = None) -> Any:
    for item in [*rlist, *wlist, *xlist]:
        fd = item if isinstance(item, int) else item.fileno()
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            _note("select.select on a pipe")
            raise OSError(WSAENOTSOCK, "an operation was attempted on something not a socket")
    return select.select(rlist, wlist, xlist, timeout)


class _Stand(types.ModuleType):
    """A module that is the real one minus what Windows lacks."""

    def __init__(self, real: types.ModuleType, hidden: frozenset[str]) -> None:
        super().__init__(real.__name__, real.__doc__)
        self._real, self._hidden = real, hidden

    def __getattr__(self, name: str) -> Any:
        if name in self._hidden:
            _note(f"{self.__name__}.{name}")
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        if self.__name__ == "select" and name == "select":
            return _select_sockets_only
        return getattr(self._real, name)


_REAL = {"os": os, "select": select, "signal": signal}
_STANDS = {name: _Stand(_REAL[name], hidden) for name, hidden in HIDDEN_ATTRIBUTES.items()}


def _import(
    name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
) -> Any:
    if level != 0 or not _ours(globals):
        return _real_import(name, globals, locals, fromlist, level)
    top = name.partition(".")[0]
    if top in HIDDEN_MODULES:
        _note(top)
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    module = _real_import(name, globals, locals, fromlist, level)
    if name in _STANDS or (top in _STANDS and not fromlist):
        return _STANDS[top]  # `import os.path` binds `os`: the stand-in, too
    return module


def install() -> None:
    global _roots
    roots = os.environ.get("VISIONGATE_HIDE_ROOTS", "").split(os.pathsep)
    _roots = tuple(root for root in roots if root)
    builtins.__import__ = _import
