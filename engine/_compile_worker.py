"""The child process that runs durable-rules for the compiler, so the engine's memory returns.

durable-rules 2.0.28 never gives back what a ruleset allocates once a fact was asserted:
its `delete_ruleset` frees the network but not the per-session state (about 0.5 MB plus
20 KB per rule), and deleting the state crashes the process. 2,000 compiles in one process
kept 1.1 GB. So the rulesets live in this process: it answers compile requests until its
RSS passes a budget, then answers one last time and exits, and the operating system
takes the memory back. The parent starts a fresh worker on the next request.

This module imports only the standard library and durable-rules, so a worker starts in
about 50 ms. Where the system tells no memory figure (no `/proc`, no `resource`: Windows),
the worker retires after `RETIRE_AFTER` compiles instead, about what the budget holds.
Protocol, one JSON document per line:

    request  {"rulesets": [{"name": str, "rules": {rule name: durable JSON condition}}],
              "facts": [fact, ...]}
    answer   {"fired": [[ruleset index, rule name, fact index], ...], "rss_mb": float,
              "retire": bool}, or "error": str in place of "fired"
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

RETIRE_AFTER: Final = 200
"""Compiles a worker answers when it cannot measure its memory (~0.5 MB kept per compile)."""

Fired = list[Any]
"""[ruleset index, rule name, fact index]"""

REBUILD: Final = (
    "CPPFLAGS=-DPyEval_CallObject=PyObject_CallObject "
    "pip install --force-reinstall --no-cache-dir durable-rules==2.0.28"
)
"""How to build durable-rules 2.0.28 for Python 3.13, which removed `PyEval_CallObject` (its
C extension calls it only for store callbacks, which visiongate never sets). Its setup.py
replaces `CFLAGS`; `CPPFLAGS` reaches the compiler."""


def _durable() -> tuple[Any, Any]:
    """durable-rules' C engine and `durable.engine`, imported on first use, so the parent
    process can import this module for `evaluate` and its path without loading them."""
    try:
        import durable_rules_engine
        from durable import engine
    except ImportError as error:
        hint = f"; rebuild it: {REBUILD}" if "PyEval_CallObject" in str(error) else ""
        raise RuntimeError(f"durable-rules cannot be loaded ({error}){hint}") from error
    return durable_rules_engine, engine


def evaluate(request: dict[str, Any]) -> list[Fired]:
    """Assert every fact against every ruleset; every rule firing, in order."""
    fired: list[Fired] = []
    facts: Sequence[dict[str, Any]] = request["facts"]
    if not request["rulesets"]:
        return fired
    rules_engine, engine = _durable()
    for position, spec in enumerate(request["rulesets"]):
        definition = {
            name: {"all": [{"m": condition}], "run": _recorder(position, name, fired)}
            for name, condition in spec["rules"].items()
        }
        ruleset = engine.Ruleset(spec["name"], None, definition)
        try:
            _assert_facts(ruleset, facts, engine.MessageNotHandledException)
        finally:
            # Frees the network and the handle slot; the session state stays (see above).
            rules_engine.delete_ruleset(ruleset._handle)
    return fired


def _recorder(position: int, name: str, fired: list[Fired]) -> Callable[[Any], None]:
    # One positional parameter: durable-rules treats a two-parameter action as asynchronous.
    def run(closure: Any) -> None:
        fired.append([position, name, int(closure.m.cell)])

    return run


def _assert_facts(
    ruleset: Any, facts: Sequence[dict[str, Any]], not_handled: type[Exception]
) -> None:
    failures: list[BaseException] = []

    def complete(error: BaseException | None, _state: Any) -> None:
        if error is not None:
            failures.append(error)

    for fact in facts:
        # One by one: a batch holding one fact that matches nothing raises for the batch.
        try:
            handle = ruleset.assert_fact(fact)
        except not_handled:
            continue
        ruleset.do_actions(handle, complete)
    state = ruleset.get_state("0")
    if failures or "exception" in state:
        # durable-rules swallows exceptions raised inside actions into the session state.
        raise RuntimeError(f"durable-rules failed: {failures or state['exception']}")


def rss_mb() -> float | None:
    """This process's resident set size in MiB: current where /proc tells it, else the peak;
    None where the system tells neither.

    Not `ru_maxrss` on Linux: a forked child inherits its parent's high-water mark, so a
    worker started by a large process would look full before its first compile."""
    if resource is None:
        return None
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / (1024 * 1024)
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def serve(max_rss_mb: float) -> int:
    for count, line in enumerate(sys.stdin, start=1):
        try:
            answer: dict[str, Any] = {"fired": evaluate(json.loads(line))}
        except Exception as error:  # reported to the parent, which raises it as CompileError
            answer = {"error": f"{type(error).__name__}: {error}"}
        rss = rss_mb()
        answer["rss_mb"] = 0.0 if rss is None else rss
        answer["retire"] = count >= RETIRE_AFTER if rss is None else rss > max_rss_mb
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if answer["retire"]:
            return 0
    return 0  # the parent closed our stdin: it is done, or gone


if __name__ == "__main__":
    sys.exit(serve(float(sys.argv[1]) if len(sys.argv) > 1 else 256.0))
