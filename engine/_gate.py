"""The gate: a compiled policy plus the fact resolver, deciding by table look-up.

Everything that can be computed before a decision is computed at load: the table, the
policy reference, the resolver's indexes. A reload builds a complete new state and swaps
it in with one assignment, so a decision always sees one consistent policy, and a policy
that fails to load never replaces the last good one.

A reload applies a changed file only when it is complete: the same content at two polls
(or a file renamed into place, unwritten since), a policy that loads, and one that keeps
every invariant of the policy in force unless it lists the id under `drops_invariants`.
A half-written file is never read as a policy (a prefix of a policy is often a valid one).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias

from visiongate._errors import VisiongateError

from ._compile import CellVerdict
from ._decision import Decision, DecisionContext, PolicyRef, TraceSink, TraceSpec, as_sink
from ._diagnostics import Diagnostic, Location, PolicyError, did_you_mean
from ._load import CompiledPolicy, compile_policy_text, is_bundled_policy, read_policy_source
from ._policy import source_sha256
from ._vocabulary import FACTS, Cell
from .facts._catalog import ModelCatalog
from .facts._catalog_store import current_catalog
from .facts._config import AgentConfig
from .facts._registry import ProviderRegistry
from .facts._registry_types import build
from .facts._resolver import FactResolver, ResolvedFacts
from .facts._routes import LearnedRoute, RouteOverlay, default_routes_path

logger = logging.getLogger("visiongate")

PolicySource: TypeAlias = str | Path | None
ConfigSource: TypeAlias = str | Path | Mapping[str, Any] | AgentConfig | None
RoutesSource: TypeAlias = str | Path | bool | None


class FactError(VisiongateError, ValueError):
    """A fact value outside its domain was given to `decide_facts`."""


@dataclass(frozen=True, eq=False)
class _State:
    compiled: CompiledPolicy
    table: Mapping[Cell, CellVerdict]
    ref: PolicyRef
    warnings: tuple[str, ...] = ()
    """Warnings every decision carries (e.g. a failed reload)."""
    facts_context: DecisionContext | None = None
    """The shared context of `decide_facts` decisions."""
    contexts: dict[int, DecisionContext] = field(default_factory=dict)
    """Contexts of `decide` decisions by the id of the (memoized) resolved facts; bounded."""


@dataclass(frozen=True)
class ReloadResult:
    changed: bool
    ok: bool
    sha256: str
    """The sha of the policy in force after the attempt."""
    diagnostics: tuple[Diagnostic, ...] = ()
    waiting: bool = False
    """The file changed but is not yet stable: the next poll decides (`watch` polls again)."""


QUIET_SECONDS = 0.05
"""How long a file renamed into place must be left unwritten before it counts as complete."""


@dataclass(frozen=True)
class _Seen:
    """One read of the policy file, with the file's identity and size around the read."""

    text: str
    file: str
    sha256: str
    signature: tuple[int, ...]
    """(inode, device, size, mtime in ns); empty for a bundled policy, which never changes."""

    @property
    def inode(self) -> int | None:
        return self.signature[0] if self.signature else None

    def quiet(self) -> bool:
        """Unwritten for `QUIET_SECONDS` (a bundled policy always is)."""
        return not self.signature or time.time_ns() - self.signature[3] >= QUIET_SECONDS * 1e9


def _signature(path: Path) -> tuple[int, ...]:
    status = os.stat(path)
    return (status.st_ino, status.st_dev, status.st_size, status.st_mtime_ns)


def _policy_path(source: PolicySource) -> Path | None:
    if source is None or (isinstance(source, str) and is_bundled_policy(source)):
        return None
    return Path(source)


def _look(source: PolicySource) -> _Seen | None:
    """The file as it is now; None if it changed while being read (a writer is at work)."""
    path = _policy_path(source)
    try:
        before = _signature(path) if path is not None else ()
        text, file = read_policy_source(source)
        after = _signature(path) if path is not None else ()
    except OSError as error:
        raise PolicyError(
            [Diagnostic("unreadable-file", "error", f"cannot read `{source}`: {error.strerror}")]
        ) from error
    return _Seen(text, file, source_sha256(text), after) if before == after else None


def _dropped_invariants(running: CompiledPolicy, candidate: CompiledPolicy) -> list[Diagnostic]:
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


def _state(compiled: CompiledPolicy, warnings: tuple[str, ...] = ()) -> _State:
    policy = compiled.policy
    ref = PolicyRef.of(policy)
    context = DecisionContext(ref, warnings=warnings, full_policy=policy)
    return _State(compiled, compiled.table, ref, warnings, context)


_CONTEXTS_PER_STATE = 4096


def _context(state: _State, resolved: ResolvedFacts) -> DecisionContext:
    context = build(  # a never-seen pair's context: without the frozen __init__'s cost
        DecisionContext,
        policy=state.ref,
        provenance=resolved.provenance,
        warnings=resolved.warnings + state.warnings,
        provider=resolved.provider,
        model=resolved.model,
        resolved=resolved,
        full_policy=state.compiled.policy,
    )
    if len(state.contexts) >= _CONTEXTS_PER_STATE:
        state.contexts.clear()
    state.contexts[id(resolved)] = context
    return context


def _config(config: ConfigSource) -> AgentConfig:
    if isinstance(config, AgentConfig):
        return config
    if config is None:
        return AgentConfig.empty()
    if isinstance(config, Mapping):
        return AgentConfig.from_mapping(config)
    return AgentConfig.from_file(config)


class Gate:
    """Decides the lane for images; see `Gate.load`."""

    def __init__(
        self,
        compiled: CompiledPolicy,
        resolver: FactResolver,
        *,
        source: PolicySource = None,
        trace: TraceSink | None = None,
    ) -> None:
        self._state = _state(compiled)
        self._resolver = resolver
        self._source = source
        self._trace = trace
        self._reload_lock = threading.Lock()
        self._pending: _Seen | None = None
        """What the previous poll saw of a changed file, to compare with the next one."""
        self._failed_sha: str | None = None
        self._inode = _initial_inode(source)
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()

    @classmethod
    def load(
        cls,
        policy: PolicySource = None,
        config: ConfigSource = None,
        catalog: str | Path | ModelCatalog | None = None,
        registry: str | Path | ProviderRegistry | None = None,
        trace: TraceSpec = None,
        routes: RoutesSource = None,
    ) -> Gate:
        """Load a gate. Defaults: the bundled default policy, an empty agent config, the bundled
        model catalog and provider registry, no trace. Raises `PolicyError` with diagnostics.

        `routes` is the overlay of learned and probed routes: a file, `False` for none, or
        None for the config's `visiongate.routes_file`, else
        `$XDG_STATE_HOME/visiongate/routes.json`."""
        text, file = read_policy_source(policy)
        compiled = compile_policy_text(text, file)
        agent = _config(config)
        resolver = FactResolver(
            agent, _catalog(catalog), _registry(registry), routes=_routes(routes, agent)
        )
        return cls(compiled, resolver, source=policy, trace=as_sink(trace))

    # -- deciding ---------------------------------------------------------------------------

    def decide(self, provider: str, model: str, *, trace: bool = True) -> Decision:
        """Resolve the four facts for a provider and model, then decide.

        With `trace=False` the record is not written: an adapter that carries out the lane
        writes one complete record itself (`decision.record(source=..., execution=...)`)."""
        resolved = self._resolver.resolve(provider, model)
        state = self._state
        context = state.contexts.get(id(resolved))
        if context is None or context.resolved is not resolved:
            context = _context(state, resolved)
        decision = Decision(state.table[resolved.cell], resolved.cell, context)
        if trace and self._trace is not None:
            self._trace(decision.record())
        return decision

    def decide_facts(
        self, mode: str, catalog: str, aux: str, path: str, *, trace: bool = True
    ) -> Decision:
        """Decide from the four facts given directly (no resolution)."""
        state = self._state
        cell = (mode, catalog, aux, path)
        verdict = state.table.get(cell)
        if verdict is None:
            raise FactError(_fact_problem(cell))
        assert state.facts_context is not None
        context, config_warnings = state.facts_context, self._resolver.config_warnings
        if config_warnings:  # the config still carries the lane out: its mistakes are said
            context = replace(context, warnings=config_warnings + context.warnings)
        decision = Decision(verdict, cell, context)
        if trace and self._trace is not None:
            self._trace(decision.record())
        return decision

    def report_refusal(self, provider: str, model: str, evidence: str) -> LearnedRoute:
        """Remember that `provider` rejected images inside a tool result for `model` (e.g. an
        HTTP 400 naming the image part); later decisions resolve `path=refuses` with provenance
        `learned <date>: <evidence>`. The evidence is kept as one short line, with image data
        and anything shaped like a key removed. Safe to call from several processes."""
        ref = self._resolver.locate(provider, model)
        learned = LearnedRoute.today(ref.provider, ref.model, "refuses", "learned", evidence)
        return self._resolver.learn(learned)

    # -- what is in force ---------------------------------------------------------------------

    @property
    def compiled(self) -> CompiledPolicy:
        return self._state.compiled

    @property
    def policy_ref(self) -> PolicyRef:
        return self._state.ref

    @property
    def resolver(self) -> FactResolver:
        return self._resolver

    def trace(self, record: dict[str, Any]) -> None:
        """Write a record to the gate's trace sink, if any (adapters add execution details)."""
        if self._trace is not None:
            self._trace(record)

    # -- reloading ------------------------------------------------------------------------------

    def reload(self, *, wait: bool = True) -> ReloadResult:
        """Apply the policy file if it changed and is complete; keep the last good policy.

        A change is applied when it is stable: the same content (and size and mtime) at two
        polls, or a file renamed into place and left unwritten for `QUIET_SECONDS`. With
        `wait` (a direct call) the second poll follows after `QUIET_SECONDS`; `watch` polls
        once per interval and passes `wait=False`. Until then the result is `waiting`."""
        with self._reload_lock:
            current = self._state
            for attempt in range(2 if wait else 1):
                if attempt:
                    time.sleep(QUIET_SECONDS)
                try:
                    seen = _look(self._source)
                except PolicyError as error:
                    return self._reload_failed(current, error.diagnostics, "unreadable")
                if seen is not None and seen.sha256 == current.ref.sha256:
                    self._pending = self._failed_sha = None
                    self._inode = seen.inode
                    if current.warnings:
                        self._state = _state(current.compiled)
                    return ReloadResult(False, True, current.ref.sha256)
                if seen is not None and self._stable(seen):
                    self._pending = None
                    return self._apply(current, seen)
                self._pending = seen
            return ReloadResult(False, True, current.ref.sha256, waiting=True)

    def _stable(self, seen: _Seen) -> bool:
        if seen == self._pending:
            return True  # unchanged since the previous poll
        return seen.inode != self._inode and seen.quiet()  # renamed into place, then left alone

    def _apply(self, current: _State, seen: _Seen) -> ReloadResult:
        # From now on this inode counts as seen: rewriting it in place needs two polls.
        self._inode = seen.inode
        if seen.sha256 == self._failed_sha:
            # Already reported: a broken file is not recompiled (nor logged) at every poll.
            return ReloadResult(False, False, current.ref.sha256, waiting=False)
        try:
            compiled = compile_policy_text(seen.text, seen.file)
        except PolicyError as error:
            self._failed_sha = seen.sha256
            return self._reload_failed(current, error.diagnostics, seen.sha256[:12])
        dropped = _dropped_invariants(current.compiled, compiled)
        if dropped:
            self._failed_sha = seen.sha256
            return self._reload_failed(current, tuple(dropped), seen.sha256[:12])
        self._state, self._failed_sha = _state(compiled), None
        logger.info("visiongate: policy %s reloaded (sha256 %s)", seen.file, compiled.policy.sha256)
        return ReloadResult(True, True, compiled.policy.sha256)

    def _reload_failed(
        self, current: _State, diagnostics: tuple[Diagnostic, ...], what: str
    ) -> ReloadResult:
        first = diagnostics[0].render().splitlines()[0] if diagnostics else "unknown error"
        warning = (
            f"policy file changed ({what}) but failed to load: {first}; "
            f"still deciding with sha256 {current.ref.sha256[:12]}"
        )
        logger.warning("visiongate: %s", warning)
        self._state = _state(current.compiled, (warning,))
        return ReloadResult(True, False, current.ref.sha256, diagnostics)

    def watch(
        self, interval: float = 1.0, on_reload: Callable[[ReloadResult], None] | None = None
    ) -> None:
        """Poll the policy file in a daemon thread; apply a change once it is stable.

        A file rewritten in place is applied at the second poll that sees it unchanged, a
        file renamed into place at the first; write policies atomically (see README)."""
        if self._watcher is not None or self._source is None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                result = self.reload(wait=False)
                if result.changed and on_reload is not None:
                    on_reload(result)

        self._watcher = threading.Thread(target=loop, name="visiongate-watch", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        """Stop watching; safe to call more than once."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
            self._watcher = None


def _initial_inode(source: PolicySource) -> int | None:
    path = _policy_path(source)
    try:
        return os.stat(path).st_ino if path is not None else None
    except OSError:
        return None


def _fact_problem(cell: tuple[str, ...]) -> str:
    for (fact, domain), value in zip(FACTS.items(), cell, strict=True):
        if value not in domain:
            return f"`{value}` is not a value of fact `{fact}`: {did_you_mean(value, domain)}"
    return "unknown facts"


def _catalog(catalog: str | Path | ModelCatalog | None) -> ModelCatalog:
    if isinstance(catalog, ModelCatalog):
        return catalog
    # The newest of the bundled snapshot and `visiongate catalog update`'s copy (disk only).
    return current_catalog() if catalog is None else ModelCatalog.from_file(catalog)


def _routes(routes: RoutesSource, config: AgentConfig) -> RouteOverlay:
    if routes is False:
        return RouteOverlay(None)
    if routes is None or routes is True:
        return RouteOverlay(config.routes_file or default_routes_path())
    return RouteOverlay(routes)


def _registry(registry: str | Path | ProviderRegistry | None) -> ProviderRegistry:
    if isinstance(registry, ProviderRegistry):
        return registry
    return ProviderRegistry.bundled() if registry is None else ProviderRegistry.from_file(registry)
