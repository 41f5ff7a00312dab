"""Watching a policy file: read it safely, apply a change only once it is complete.

The gate decides; this layer polls and reloads. A change is applied when it is complete: the
same content (and size and mtime) at two polls, or a file renamed into place and left
unwritten for `QUIET_SECONDS`; a policy that loads; one that keeps every invariant of the
policy in force unless it lists the id under `drops_invariants`. A half-written file is never
read as a policy (a prefix of a policy is often a valid one). Until a new policy is complete
the one in force serves, and a failed change is reported once, in every decision's warnings.

Reading never blocks a decision: the file must be a regular file (a FIFO or a device at the
policy path, say a link to `/dev/zero`, is refused without being read), at most `max_bytes`
long, opened with `O_NONBLOCK`, and outside the watcher's lock. `reload_in_background` runs a
check on the watcher's own thread and returns its two steps (`PolicyCheck`: the file read,
the change installed), so a caller (the proxy, before routing a tool result) gives the read a
short deadline of its own, the compile a long one, and decides under the policy in force past
either.

Time is injected (`clock`, nanoseconds), so tests and replays are deterministic.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from visiongate.kernel._files import read_regular_file
from visiongate.kernel._lazy import lazy_logger

from ._diagnostics import Diagnostic, Location, PolicyError
from ._load import (
    CompiledPolicy,
    compile_policy_text,
    policy_path,
    read_policy_source,
    refuse_irregular,
)
from ._policy import source_sha256
from ._yaml import DEFAULT_LIMITS, NOT_UTF8

if TYPE_CHECKING:
    import concurrent.futures

__all__ = [
    "QUIET_SECONDS",
    "PolicyCheck",
    "PolicySource",
    "PolicyWatcher",
    "ReloadResult",
    "read_policy_file",
    "refuse_irregular",
]

logger = lazy_logger("visiongate")  # `logging` only if something goes wrong (issue 37)


@dataclass(frozen=True)
class ReloadResult:
    changed: bool
    ok: bool
    sha256: str
    """The sha of the policy in force after the attempt."""
    diagnostics: tuple[Diagnostic, ...] = ()
    waiting: bool = False
    """The file changed but is not yet stable: the next poll decides (`watch` polls again)."""


@dataclass(frozen=True)
class PolicyCheck:
    """A check running on the watcher's thread (`reload_in_background`), in two steps a caller
    can give deadlines of their own: `read` is done once the file was read or refused (what a
    slow disk or a stuck mount holds up), `result` once a change is compiled and installed
    (CPU work on a file within the loader's limits, which load can slow but nothing blocks)."""

    read: concurrent.futures.Future[None]
    result: concurrent.futures.Future[ReloadResult]


PolicySource = str | Path | None
QUIET_SECONDS: Final = 0.05
"""How long a file renamed into place must be left unwritten before it counts as complete."""


@dataclass(frozen=True)
class Seen:
    """One read of the policy file, with the file's identity and size around the read."""

    text: str
    file: str
    sha256: str
    signature: tuple[int, ...]
    """(inode, device, size, mtime in ns); empty for a bundled policy, which never changes."""

    @property
    def inode(self) -> int | None:
        return self.signature[0] if self.signature else None

    def quiet(self, now_ns: int) -> bool:
        """Unwritten for `QUIET_SECONDS` (a bundled policy always is)."""
        return not self.signature or now_ns - self.signature[3] >= QUIET_SECONDS * 1e9


def read_policy_file(path: str | Path, max_bytes: int = DEFAULT_LIMITS.max_bytes) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, read without ever blocking on what
    is not one; `OSError` (with a `strerror` that says why) otherwise."""
    return read_regular_file(path, max_bytes)


def _signature(path: Path) -> tuple[int, ...]:
    status = os.stat(path)
    return (status.st_ino, status.st_dev, status.st_size, status.st_mtime_ns)


def look(source: PolicySource) -> Seen | None:
    """The file as it is now; None if it changed while being read (a writer is at work)."""
    path = policy_path(source)
    try:
        if path is None:
            text, file = read_policy_source(source)
            return Seen(text, file, source_sha256(text), ())
        before = _signature(path)
        text, file = read_policy_file(path).decode("utf-8"), str(source)
        after = _signature(path)
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or NOT_UTF8
        raise PolicyError(
            [Diagnostic("unreadable-file", "error", f"cannot read `{source}`: {reason}")]
        ) from error
    return Seen(text, file, source_sha256(text), after) if before == after else None


def dropped_invariants(running: CompiledPolicy, candidate: CompiledPolicy) -> list[Diagnostic]:
    """Invariants in force that the new file loses without listing them in `drops_invariants`."""
    new = candidate.policy
    kept = {invariant.id for invariant in new.invariants} | set(new.drops_invariants)
    where = (
        new.source.location(("invariants",), key=True)
        if new.invariants
        else Location(new.path, 1, 1)
    )
    return [
        Diagnostic(
            "invariant-dropped",
            "error",
            f"invariant `{invariant.id}` of the policy in force is missing from the new file",
            where,
            help=f"restore it, or list `{invariant.id}` under `drops_invariants:` "
            "to remove it on purpose",
        )
        for invariant in running.policy.invariants
        if invariant.id not in kept
    ]


class Target(Protocol):
    """What a watcher reloads: the gate's side of the contract (see `Gate`, which does not
    derive from it, so that a gate that never reloads never imports this module)."""

    def compiled_in_force(self) -> tuple[CompiledPolicy, tuple[str, ...]]: ...

    def install(self, compiled: CompiledPolicy, warnings: tuple[str, ...] = ()) -> None: ...


class PolicyWatcher:
    """Polls one policy source and installs complete changes into its target (a gate)."""

    def __init__(
        self,
        target: Target,
        source: PolicySource,
        *,
        clock: Callable[[], int] = time.time_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._target = target
        self._source = source
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._pending: Seen | None = None
        """What the previous poll saw of a changed file, to compare with the next one."""
        self._failed_sha: str | None = None
        self._unreadable_reason: str | None = None
        """Why the file could not be read at the last poll, once reported (said once)."""
        self._inode = _initial_inode(source)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._checks: queue.SimpleQueue[PolicyCheck | None] = queue.SimpleQueue()
        self._checker: threading.Thread | None = None

    def reload(
        self, *, wait: bool = True, on_read: Callable[[], None] | None = None
    ) -> ReloadResult:
        """One check (two polls `QUIET_SECONDS` apart with `wait`); see `Gate.reload`.

        The file is read outside the watcher's lock, so a check never waits on another's
        compile to read, and `on_read` is called once it was read (or refused): from then on
        the check is CPU work only. A read is acted on only if the file is still as it was
        read (a check that read an older version never installs it over a newer one)."""
        for attempt in range(2 if wait else 1):
            if attempt:
                self._sleep(QUIET_SECONDS)
            try:
                seen: Seen | PolicyError | None = look(self._source)
            except PolicyError as error:
                seen = error
            if on_read is not None:
                on_read()
            with self._lock:
                result = self._judge(seen)
            if result is not None:
                return result
        in_force = self._target.compiled_in_force()[0]
        return ReloadResult(False, True, in_force.policy.sha256, waiting=True)

    def _judge(self, seen: Seen | PolicyError | None) -> ReloadResult | None:
        """What one read means for the policy in force (under the lock); None: not yet stable."""
        current, warnings = self._target.compiled_in_force()
        sha = current.policy.sha256
        if isinstance(seen, PolicyError):
            return self._unreadable(current, seen.diagnostics)
        self._unreadable_reason = None
        if seen is not None and not _unchanged_since(seen, self._source):
            seen = None  # replaced since it was read: the next read decides
        if seen is not None and seen.sha256 == sha:
            self._pending = self._failed_sha = None
            self._inode = seen.inode
            if warnings:
                self._target.install(current)
            return ReloadResult(False, True, sha)
        if seen is not None and self._stable(seen):
            self._pending = None
            return self._apply(current, seen)
        self._pending = seen
        return None

    def reload_in_background(self) -> PolicyCheck:
        """A one-poll check on the watcher's own (daemon) thread. Requests made while a check
        runs are answered together by the next one."""
        import concurrent.futures  # a gate reloading in the background only: not at start-up

        check = PolicyCheck(concurrent.futures.Future(), concurrent.futures.Future())
        if self._checker is None:
            self._checker = threading.Thread(
                target=self._serve_checks, name="visiongate-reload", daemon=True
            )
            self._checker.start()
        self._checks.put(check)
        return check

    def _serve_checks(self) -> None:
        while (first := self._checks.get()) is not None:
            waiting = [first]
            while not self._checks.empty():
                if (more := self._checks.get()) is None:
                    return
                waiting.append(more)
            waiting = [item for item in waiting if item.result.set_running_or_notify_cancel()]

            def read(waiting: list[PolicyCheck] = waiting) -> None:
                for item in waiting:
                    if not item.read.done():
                        item.read.set_result(None)

            try:
                result = self.reload(wait=False, on_read=read)
            except Exception as error:  # a check's failure is its callers', not this thread's
                read()
                for item in waiting:
                    item.result.set_exception(error)
            else:
                for item in waiting:
                    item.result.set_result(result)

    def _stable(self, seen: Seen) -> bool:
        if seen == self._pending:
            return True  # unchanged since the previous poll
        return seen.inode != self._inode and seen.quiet(self._clock())  # renamed into place

    def _apply(self, current: CompiledPolicy, seen: Seen) -> ReloadResult:
        # From now on this inode counts as seen: rewriting it in place needs two polls.
        self._inode = seen.inode
        if seen.sha256 == self._failed_sha:
            # Already reported: a broken file is not recompiled (nor logged) at every poll.
            return ReloadResult(False, False, current.policy.sha256, waiting=False)
        try:
            compiled = compile_policy_text(seen.text, seen.file)
        except PolicyError as error:
            self._failed_sha = seen.sha256
            return self._failed(current, error.diagnostics, seen.sha256[:12])
        dropped = dropped_invariants(current, compiled)
        if dropped:
            self._failed_sha = seen.sha256
            return self._failed(current, tuple(dropped), seen.sha256[:12])
        self._target.install(compiled)
        self._failed_sha = None
        logger.info("visiongate: policy %s reloaded (sha256 %s)", seen.file, compiled.policy.sha256)
        return ReloadResult(True, True, compiled.policy.sha256)

    def _unreadable(
        self, current: CompiledPolicy, diagnostics: tuple[Diagnostic, ...]
    ) -> ReloadResult:
        """A file that cannot be read (a FIFO swapped in, say) is reported once, like a broken
        one, not at every poll; the warning stays in every decision until it reads again."""
        reason = diagnostics[0].message if diagnostics else "unknown error"
        if reason == self._unreadable_reason:
            return ReloadResult(False, False, current.policy.sha256, waiting=False)
        self._unreadable_reason = reason
        return self._failed(current, diagnostics, "unreadable")

    def _failed(
        self, current: CompiledPolicy, diagnostics: tuple[Diagnostic, ...], what: str
    ) -> ReloadResult:
        sha = current.policy.sha256
        first = diagnostics[0].render().splitlines()[0] if diagnostics else "unknown error"
        warning = (
            f"policy file changed ({what}) but failed to load: {first}; "
            f"still deciding with sha256 {sha[:12]}"
        )
        logger.warning("visiongate: %s", warning)
        self._target.install(current, (warning,))
        return ReloadResult(True, False, sha, diagnostics)

    def watch(
        self, interval: float = 1.0, on_reload: Callable[[ReloadResult], None] | None = None
    ) -> None:
        """Poll in a daemon thread; see `Gate.watch`."""
        if self._thread is not None or self._source is None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                result = self.reload(wait=False)
                if result.changed and on_reload is not None:
                    on_reload(result)

        self._thread = threading.Thread(target=loop, name="visiongate-watch", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop watching; a check still reading a slow file is left to its daemon thread, and
        never holds up the caller."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._checker is not None:
            self._checks.put(None)
            self._checker = None


def _unchanged_since(seen: Seen, source: PolicySource) -> bool:
    """The file still has the identity, size and mtime it had when `seen` was read."""
    path = policy_path(source)
    if path is None or not seen.signature:
        return True
    try:
        return _signature(path) == seen.signature
    except OSError:
        return False


def _initial_inode(source: PolicySource) -> int | None:
    path = policy_path(source)
    try:
        return os.stat(path).st_ino if path is not None else None
    except OSError:
        return None
