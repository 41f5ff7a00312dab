"""Compilation: durable-rules evaluates every rule over the whole input space, once.

The policy becomes durable-rules JSON rulesets; every cell is asserted as a fact (facts, not
events: a fact fires *every* rule it matches, so overlaps are seen); each firing records
`(condition, cell)`. The hit policy is then applied in Python and the result frozen into a
table. durable-rules is never called on the decide path: it is not thread-safe, and a post
costs ~14 µs.

Designed around the engine's fixed limits (durable-rules 2.0.28, `src/rules`), so that every
policy the schema accepts compiles:

- Rules with the same `when` match the same cells, so each distinct condition is evaluated
  once, whatever the number of rules sharing it (65 copies of one rule once failed with
  error 303).
- A condition is a conjunction of `fact != value` for every value it excludes, never a
  disjunction: every `$or` branch takes one of the 128 entries of a shared node's list
  (error 107, `NEXT_LIST_LENGTH`) and adds a path to the traversal stack.
- At most `GROUP_SIZE` conditions share a ruleset, and every cell is asserted against each
  group. Without disjunctions the alpha network is a trie, and its traversal stack holds
  at most one pending subtree per matched condition: 48 stays below the stack's 64 slots
  (error 303, `MAX_STACK_SIZE`), the 256 rules one node may carry and the 512 buckets of
  a node's children.

The engine never frees what a ruleset allocates, so it runs in a child process that is
replaced when its memory passes a budget (`_compile_worker`, `EngineWorker`); its answers are
read with a deadline by `_platform.PipeLines` (`select()` on POSIX, a thread on Windows).
"""

from __future__ import annotations

# `threading.Lock` is `_thread.allocate_lock`: `threading` itself (~0.7 ms) is not needed for it.
import _thread
import atexit
import contextlib
import itertools
import json
import os
import sys
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._lazy import lazy_logger

from ._policy import Condition, Policy
from ._vocabulary import FACT_NAMES, FACTS, Cell, all_cells

if TYPE_CHECKING:
    import subprocess  # imported where the worker starts: a warm `decide` starts none

    from visiongate.kernel._platform import PipeLines  # as subprocess

logger = lazy_logger("visiongate")  # `logging` only if something goes wrong (issue 37)

GROUP_SIZE: Final = 48
"""Distinct conditions per durable-rules ruleset (see the module docstring)."""

_MATCH_CACHE_SIZE: Final = 64
_WORKER_RSS_MB: Final = 256.0
_WORKER_TIMEOUT: Final = 120.0
_serial = itertools.count(1)


class CompileError(VisiongateError, RuntimeError):
    """durable-rules failed or disagreed with itself; never expected for a valid policy."""


class _WorkerGone(Exception):
    """The worker process ended (killed, crashed) before answering."""


@dataclass(frozen=True)
class CellVerdict:
    """What the policy says for one cell: the lane, the winning rule and every rule that matched."""

    lane: str
    rule: str | None
    reason: str
    matched: tuple[str, ...]

    @property
    def default_used(self) -> bool:
        return self.rule is None


ConditionKey = tuple[tuple[str, ...], ...]
"""Per fact, in vocabulary order, the values a condition excludes."""


def condition_key(when: Condition) -> ConditionKey:
    return tuple(
        tuple(value for value in FACTS[fact] if fact in when and value not in when[fact])
        for fact in FACT_NAMES
    )


def durable_condition(key: ConditionKey) -> dict[str, Any]:
    """A condition as durable-rules JSON: `cell >= 0` (every fact has it) and `fact != value`."""
    tests: list[dict[str, Any]] = [{"$gte": {"cell": 0}}]
    for fact, excluded in zip(FACT_NAMES, key, strict=True):
        tests.extend({"$neq": {fact: value}} for value in excluded)
    return {"$and": tests}


def ruleset_name(policy: Policy, group: int) -> str:
    """Unique in the process and its workers: content hash, group and a serial number."""
    return f"visiongate_{policy.sha256[:16]}_{group}_{os.getpid()}_{next(_serial)}"


def compile_request(policy: Policy, keys: Sequence[ConditionKey]) -> dict[str, Any]:
    groups = [keys[start : start + GROUP_SIZE] for start in range(0, len(keys), GROUP_SIZE)]
    return {
        "rulesets": [
            {
                "name": ruleset_name(policy, number),
                "rules": {
                    f"c{position}": durable_condition(key) for position, key in enumerate(group)
                },
            }
            for number, group in enumerate(groups)
        ],
        "facts": [
            dict(zip(FACT_NAMES, cell, strict=True), cell=index)
            for index, cell in enumerate(all_cells())
        ],
    }


class EngineWorker:
    """One durable-rules child process, started on first use and replaced when it retires."""

    def __init__(self, max_rss_mb: float = _WORKER_RSS_MB, timeout: float = _WORKER_TIMEOUT):
        self.max_rss_mb = max_rss_mb
        self.timeout = timeout
        self.started = 0
        """Workers started so far (a retired worker is replaced by the next request)."""
        self.peak_rss_mb = 0.0
        """The highest RSS a worker reported after a compile, in MiB."""
        self._lock = _thread.allocate_lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._answers: PipeLines | None = None
        self._owner = os.getpid()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def evaluate(self, request: Mapping[str, Any]) -> list[list[Any]]:
        """Send one request; the worker's answer, or `CompileError`.

        A worker found dead (killed, crashed) is replaced and asked once more; a worker
        that does not answer within `timeout` is killed and the compile fails."""
        line = json.dumps(request).encode() + b"\n"
        with self._lock:
            try:
                answer = self._ask(line)
            except _WorkerGone:
                answer = self._ask_again(line)
            except OSError as error:
                return self._in_process(request, error)
        if "error" in answer:
            raise CompileError(str(answer["error"]))
        return list(answer["fired"])

    def _ask_again(self, line: bytes) -> dict[str, Any]:
        try:
            return self._ask(line)
        except (_WorkerGone, OSError) as error:
            # Not compiled in process: whatever killed the worker twice could kill the caller.
            raise CompileError(f"the durable-rules worker died twice: {error}") from error

    def _ask(self, line: bytes) -> dict[str, Any]:
        process = self._running()
        try:
            assert process.stdin is not None
            process.stdin.write(line)
            process.stdin.flush()
            answer: dict[str, Any] = json.loads(self._read_line(process))
        except (BrokenPipeError, _WorkerGone) as error:
            self._stop(process)
            raise _WorkerGone(str(error)) from error
        except (OSError, ValueError) as error:
            self._stop(process)
            raise CompileError(f"the durable-rules worker failed: {error}") from error
        except BaseException:
            # Interrupted mid-request (Ctrl-C): its answer must never be read as the next one's.
            self._stop(process)
            raise
        self.peak_rss_mb = max(self.peak_rss_mb, float(answer.get("rss_mb", 0.0)))
        if answer.get("retire"):
            self._stop(process)
        return answer

    def _in_process(self, request: Mapping[str, Any], error: OSError) -> list[list[Any]]:
        # Where no child process can be started (an embedded interpreter without
        # `sys.executable`), compile here: correct, but the engine's memory is not returned.
        logger.warning("visiongate: compiling in process, the worker cannot start: %s", error)
        from . import _compile_worker

        try:
            return _compile_worker.evaluate(dict(request))
        except RuntimeError as failure:
            raise CompileError(str(failure)) from failure

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                self._stop(self._process)

    def _running(self) -> subprocess.Popen[bytes]:
        if self._owner != os.getpid():
            # A forked child: the pipes belong to the parent's worker; start our own.
            self._process, self._owner = None, os.getpid()
        if self._process is not None and self._process.poll() is not None:
            self._stop(self._process)  # found dead (killed, crashed): its pipes are closed too
        if self._process is None:
            if not sys.executable:
                raise OSError("no Python executable to start")
            import subprocess

            from visiongate.kernel._platform import NEW_PROCESS_GROUP, PipeLines

            from . import _compile_worker  # here: a policy recalled from the cache starts none

            self._process = subprocess.Popen(
                [sys.executable, "-P", str(Path(_compile_worker.__file__)), str(self.max_rss_mb)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                **NEW_PROCESS_GROUP,  # Ctrl-C reaches the parent, which then closes stdin
            )
            assert self._process.stdout is not None
            self._answers = PipeLines(self._process.stdout)
            self.started += 1
        return self._process

    def _read_line(self, process: subprocess.Popen[bytes]) -> bytes:
        assert self._answers is not None
        line = self._answers.read_line(self.timeout)  # TimeoutError is an OSError
        if not line:
            raise _WorkerGone(f"the worker exited (status {process.wait()})")
        return line

    def _stop(self, process: subprocess.Popen[bytes]) -> None:
        import subprocess

        if process.stdin is not None:
            with contextlib.suppress(OSError):  # a dead worker's pipe: nothing left to send
                process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        if self._process is process:
            self._process = None


_WORKER: Final = EngineWorker()
atexit.register(_WORKER.close)

# Match sets by policy content hash, so a reload of unchanged content costs nothing. Bounded.
_MATCH_CACHE: OrderedDict[str, Mapping[Cell, tuple[int, ...]]] = OrderedDict()
_CACHE_LOCK = _thread.allocate_lock()


def match_cells(
    policy: Policy, worker: EngineWorker | None = None
) -> Mapping[Cell, tuple[int, ...]]:
    """For every cell, the indexes (in rule order) of the rules whose `when` matches it."""
    with _CACHE_LOCK:
        cached = _MATCH_CACHE.get(policy.sha256)
        if cached is not None:
            _MATCH_CACHE.move_to_end(policy.sha256)
            return cached
    rule_keys = [condition_key(rule.when) for rule in policy.rules]
    keys = list(dict.fromkeys(rule_keys))
    covered = _covered_cells(policy, keys, worker or _WORKER)
    matches = MappingProxyType(
        {
            cell: tuple(index for index, key in enumerate(rule_keys) if key in covered[cell_index])
            for cell_index, cell in enumerate(all_cells())
        }
    )
    with _CACHE_LOCK:
        _MATCH_CACHE[policy.sha256] = matches
        if len(_MATCH_CACHE) > _MATCH_CACHE_SIZE:
            _MATCH_CACHE.popitem(last=False)
    return matches


def _covered_cells(
    policy: Policy, keys: Sequence[ConditionKey], worker: EngineWorker
) -> list[set[ConditionKey]]:
    """For every cell (by index), the distinct conditions durable-rules fired for it."""
    covered: list[set[ConditionKey]] = [set() for _cell in all_cells()]
    if not keys:
        return covered
    try:
        for group, name, cell_index in worker.evaluate(compile_request(policy, keys)):
            covered[cell_index].add(keys[group * GROUP_SIZE + int(name[1:])])
    except (IndexError, TypeError, ValueError) as error:
        raise CompileError(f"durable-rules answered something unexpected: {error}") from error
    return covered


def decide_cell(policy: Policy, matched: tuple[int, ...]) -> CellVerdict:
    """Apply the hit policy to the rules matching one cell (`unique` overlaps are load errors)."""
    names = tuple(policy.rules[index].id for index in matched)
    if not matched:
        reason = "no rule matches these facts; the policy's default lane applies (fail closed)"
        return CellVerdict(policy.default, None, reason, names)
    winner = policy.rules[matched[0]]
    return CellVerdict(winner.lane, winner.id, winner.reason, names)


def compile_table(
    policy: Policy, matches: Mapping[Cell, tuple[int, ...]] | None = None
) -> Mapping[Cell, CellVerdict]:
    """The frozen decision table: every cell to its verdict."""
    found = match_cells(policy) if matches is None else matches
    return MappingProxyType({cell: decide_cell(policy, found[cell]) for cell in all_cells()})
