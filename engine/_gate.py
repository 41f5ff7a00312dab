"""The gate: a compiled policy plus the fact resolver, deciding by table look-up.

Everything that can be computed before a decision is computed at load: the table, the
policy reference, the resolver's indexes. A reload builds a complete new state and swaps
it in with one assignment, so a decision always sees one consistent policy, and a policy
that fails to load never replaces the last good one.

The gate decides; polling and reloading the policy file is its watcher's (`_watch`), which
installs a complete new policy through `install`. Time and decision ids come from outside:
`clock` and `ids` at load, or `at=` per decision (OPA takes the evaluation time as an input),
so a test or a replay of a trace makes the same records. The bundled catalog and registry
are read when the first decision needs them (the proxy answers the handshake before that).
"""

from __future__ import annotations

import _thread  # `threading.Lock` is its `allocate_lock`: no `threading` (~0.7 ms) for it
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._suggest import did_you_mean

from ._compile import CellVerdict
from ._decision import (
    Decision,
    DecisionContext,
    DecisionIds,
    PolicyRef,
    TraceSink,
    TraceSpec,
    as_sink,
    process_ids,
)
from ._load import CompiledPolicy, compile_policy_text, read_policy_source, refuse_irregular
from ._policy import Policy
from ._vocabulary import FACTS, Cell
from .facts._inputs import RoutesSource, catalog_of, check_routes, make_resolver, registry_of
from .facts.config._config import AgentConfig
from .facts.registry._route import build

if TYPE_CHECKING:
    from ._watch import PolicyCheck, PolicySource, PolicyWatcher, ReloadResult
    from .facts._catalog import ModelCatalog
    from .facts._pairs import ResolvedFacts
    from .facts._resolver import FactResolver
    from .facts._routes import LearnedRoute
    from .facts.registry._registry import ProviderRegistry

__all__ = ["FactError", "Gate"]

ConfigSource: TypeAlias = str | Path | Mapping[str, Any] | AgentConfig | None


class FactError(VisiongateError, ValueError):
    """A fact value outside its domain was given to `decide_facts`."""


@dataclass(frozen=True, eq=False)
class _State:
    """The policy in force and what deciding under it reads; replaced whole at a reload."""

    compiled: CompiledPolicy
    table: Mapping[Cell, CellVerdict]
    ref: PolicyRef
    warnings: tuple[str, ...] = ()
    """Warnings every decision carries (e.g. a failed reload)."""
    facts_context: DecisionContext | None = None
    """The shared context of `decide_facts` decisions, the config's warnings included; None
    while the config is not known (`Gate._given_context`)."""
    contexts: dict[int, DecisionContext] = field(default_factory=dict)
    """Contexts of `decide` decisions by the id of the (memoized) resolved facts; bounded."""
    cells: dict[Cell, CellVerdict] = field(default_factory=dict)
    """`table` as a plain dict, for `decide_facts` (a read-only mapping's `get` costs more)."""


def _state(
    compiled: CompiledPolicy, warnings: tuple[str, ...], config: AgentConfig | None
) -> _State:
    policy = compiled.policy
    # What the policy says that is read otherwise (a clamped byte budget) is in every record.
    warnings = tuple(finding.warning_text() for finding in policy.warnings) + warnings
    ref = PolicyRef.of(policy)
    context = None if config is None else _facts_context(ref, warnings, policy, config)
    return _State(compiled, compiled.table, ref, warnings, context, cells=dict(compiled.table))


def _facts_context(
    ref: PolicyRef, warnings: tuple[str, ...], policy: Policy, config: AgentConfig
) -> DecisionContext:
    # The config still carries the lane out: its mistakes are said in every decision.
    return DecisionContext(ref, warnings=config.decision_warnings + warnings, full_policy=policy)


_CONTEXTS_PER_STATE = 4096


def _context(state: _State, resolved: ResolvedFacts) -> DecisionContext:
    context = build(  # a never-seen pair's context: without the frozen __init__'s cost
        DecisionContext,
        {
            "policy": state.ref,
            "provenance": resolved.provenance,
            "warnings": resolved.warnings + state.warnings,
            "provider": resolved.provider,
            "model": resolved.model,
            "resolved": resolved,
            "full_policy": state.compiled.policy,
        },
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


class Gate:  # the target its watcher reloads (`_watch.Target`)
    """Decides the lane for images; see `Gate.load`."""

    def __init__(
        self,
        compiled: CompiledPolicy,
        resolver: FactResolver | Callable[[], FactResolver],
        *,
        source: PolicySource = None,
        trace: TraceSink | None = None,
        clock: Callable[[], float] = time.time,
        ids: DecisionIds | None = None,
        config: AgentConfig | None = None,
    ) -> None:
        """`resolver` may be a function that builds it, called when first needed; `config`
        is then the agent config it will hold."""
        self._config = config
        # `callable`, not an isinstance test: the resolver's module loads at the first decision.
        self._resolver_value = None if callable(resolver) else resolver
        self._make_resolver = resolver if callable(resolver) else None
        self._state = _state(compiled, (), self._known_config())
        self._resolver_lock = _thread.allocate_lock()
        self._source = source
        self._trace = trace
        self._clock = clock
        self._ids = ids if ids is not None else process_ids()
        self._watcher_value: PolicyWatcher | None = None
        self._watcher_lock = _thread.allocate_lock()
        if source is not None:  # its inode is read now: a file renamed into place is a change
            self._watching()
        self._pairs = False
        """The first decision's facts may come from the pair cache (`Gate.load`, defaults)."""

    @classmethod
    def load(
        cls,
        policy: PolicySource = None,
        config: ConfigSource = None,
        catalog: str | Path | ModelCatalog | None = None,
        registry: str | Path | ProviderRegistry | None = None,
        trace: TraceSpec = None,
        routes: RoutesSource = None,
        *,
        clock: Callable[[], float] = time.time,
        ids: DecisionIds | None = None,
    ) -> Gate:
        """Load a gate. Defaults: the bundled default policy, an empty agent config, the bundled
        model catalog and provider registry, no trace. Raises `PolicyError` with diagnostics.

        `routes` is the overlay of learned and probed routes: a file, `False` for none, or
        None for the config's `visiongate.routes_file`, else
        `$XDG_STATE_HOME/visiongate/routes.json`. `clock` gives each decision's timestamp
        (seconds since the epoch) and `ids` its id (`DecisionIds("replay")` for ids that do
        not depend on the process), for tests and replays."""
        refuse_irregular(policy)
        text, file = read_policy_source(policy)
        compiled = compile_policy_text(text, file)
        agent = _config(config)
        check_routes(routes, agent)  # now, where the caller catches load errors
        given = (
            catalog_of(catalog) if catalog is not None else None,
            registry_of(registry) if registry is not None else None,
        )

        def resolver() -> FactResolver:
            return make_resolver(agent, given[0], given[1], routes)

        # A file given is read now (its errors are the caller's, at load); the bundled ones,
        # valid by construction, when the first decision needs them.
        built: FactResolver | Callable[[], FactResolver] = (
            resolver() if None not in given else resolver
        )
        gate = cls(
            compiled,
            built,
            source=policy,
            trace=as_sink(trace),
            clock=clock,
            ids=ids,
            config=agent,
        )
        gate._pairs = (catalog, registry, config, routes) == (None, None, None, None)
        return gate

    # -- deciding ---------------------------------------------------------------------------

    # `trace` and `at` are not keyword-only: CPython reads keyword-only defaults from a dict at
    # every call, about 3% of a `decide_facts` here (bench_gate.py). Pass them by keyword.
    def decide(
        self, provider: str, model: str, trace: bool = True, at: float | None = None
    ) -> Decision:
        """Resolve the four facts for a provider and model, then decide.

        With `trace=False` the record is not written: an adapter that carries out the lane
        writes one complete record itself (`decision.record(source=..., execution=...)`).
        `at` is the decision's time (default: the gate's clock)."""
        if self._pairs:
            resolved = self._first_facts(provider, model)
        else:
            resolved = self.resolver.resolve(provider, model)
        state = self._state
        context = state.contexts.get(id(resolved))
        if context is None or context.resolved is not resolved:
            context = _context(state, resolved)
        decision = self._decision(state.table[resolved.cell], resolved.cell, context, at)
        if trace and self._trace is not None:
            self._trace(decision.record())
        return decision

    def _first_facts(self, provider: str, model: str) -> ResolvedFacts:
        """The first decision's facts, from the pair cache when the resolver is not built yet
        (a command line's one decision, issue 37); later ones are the resolver's."""
        self._pairs = False
        if self._resolver_value is not None:
            return self._resolver_value.resolve(provider, model)
        from .facts._pairs import resolved_pair

        return resolved_pair(provider, model, lambda: self.resolver.resolve(provider, model))

    def decide_facts(
        self,
        mode: str,
        catalog: str,
        aux: str,
        path: str,
        trace: bool = True,
        at: float | None = None,
    ) -> Decision:
        """Decide from the four facts given directly (no resolution)."""
        # As short as a hand-written if/else building the same `Decision` (bench_gate.py): one
        # dict look-up, the context made once per policy in force, no further Python call.
        state = self._state
        cell = (mode, catalog, aux, path)
        try:
            verdict = state.cells[cell]
        except KeyError:
            raise FactError(_fact_problem(cell)) from None
        context = state.facts_context
        if context is None:
            context = self._given_context(state)
        ids = self._ids  # `ids.take()` inlined: a call frame is a tenth of a decision here
        decision = Decision(
            verdict,
            cell,
            context,
            self._clock() if at is None else at,
            ids.prefix,
            next(ids.counter),
        )
        if trace and self._trace is not None:
            self._trace(decision.record())
        return decision

    def _given_context(self, state: _State) -> DecisionContext:
        """`state.facts_context` of a gate whose config was not known when `state` was made
        (a resolver to build, no config given): rare, so made again at each decision."""
        return _facts_context(state.ref, state.warnings, state.compiled.policy, self.config)

    def _known_config(self) -> AgentConfig | None:
        """The agent config if it is known without building the resolver, else None."""
        if self._resolver_value is not None:
            return self._resolver_value.config
        return self._config

    def _decision(
        self, verdict: CellVerdict, cell: Cell, context: DecisionContext, at: float | None
    ) -> Decision:
        prefix, number = self._ids.take()
        return Decision(verdict, cell, context, self._clock() if at is None else at, prefix, number)

    def report_refusal(self, provider: str, model: str, evidence: str) -> LearnedRoute:
        """Remember that `provider` rejected images inside a tool result for `model` (e.g. an
        HTTP 400 naming the image part); later decisions resolve `path=refuses` with provenance
        `learned <date>: <evidence>`. The evidence is kept as one short line, with image data
        and anything shaped like a key removed. Safe to call from several processes."""
        from .facts._routes import LearnedRoute

        ref = self.resolver.locate(provider, model)
        learned = LearnedRoute.today(ref.provider, ref.model, "refuses", "learned", evidence)
        return self.resolver.learn(learned)

    # -- what is in force ---------------------------------------------------------------------

    @property
    def compiled(self) -> CompiledPolicy:
        return self._state.compiled

    @property
    def policy_ref(self) -> PolicyRef:
        return self._state.ref

    @property
    def resolver(self) -> FactResolver:
        resolver = self._resolver_value
        if resolver is None:
            with self._resolver_lock:
                if self._resolver_value is None:
                    assert self._make_resolver is not None
                    self._resolver_value = self._make_resolver()
                resolver = self._resolver_value
        return resolver

    def _watching(self) -> PolicyWatcher:
        """The watcher, made when first needed: of no use to one decision (issue 37)."""
        with self._watcher_lock:
            if self._watcher_value is None:
                from ._watch import PolicyWatcher

                self._watcher_value = PolicyWatcher(self, self._source)
            return self._watcher_value

    @property
    def config(self) -> AgentConfig:
        """The agent config, without loading the catalog and registry."""
        if self._resolver_value is not None:
            return self._resolver_value.config
        return self._config if self._config is not None else self.resolver.config

    def trace(self, record: dict[str, Any]) -> None:
        """Write a record to the gate's trace sink, if any (adapters add execution details)."""
        if self._trace is not None:
            self._trace(record)

    # -- reloading (the watcher's; see `_watch`) ------------------------------------------------

    def reload(self, *, wait: bool = True) -> ReloadResult:
        """Apply the policy file if it changed and is complete; keep the last good policy.

        A change is applied when it is stable: the same content (and size and mtime) at two
        polls, or a file renamed into place and left unwritten for `QUIET_SECONDS`. With
        `wait` (a direct call) the second poll follows after `QUIET_SECONDS`; `watch` polls
        once per interval and passes `wait=False`. Until then the result is `waiting`. A
        policy path that is not a regular file (a FIFO, a device) is refused unread."""
        return self._watching().reload(wait=wait)

    def reload_in_background(self) -> PolicyCheck:
        """`reload(wait=False)` on the watcher's thread: wait for its `read`, then its
        `result`, each with a deadline of your own, and decide under the policy in force past
        either (a stuck read is the disk's; a compile is CPU, which only load slows)."""
        return self._watching().reload_in_background()

    def watch(
        self, interval: float = 1.0, on_reload: Callable[[ReloadResult], None] | None = None
    ) -> None:
        """Poll the policy file in a daemon thread; apply a change once it is stable.

        A file rewritten in place is applied at the second poll that sees it unchanged, a
        file renamed into place at the first; write policies atomically (see README)."""
        self._watching().watch(interval, on_reload)

    def close(self) -> None:
        """Stop watching; safe to call more than once."""
        if self._watcher_value is not None:  # none made: nothing watches
            self._watcher_value.close()

    def compiled_in_force(self) -> tuple[CompiledPolicy, tuple[str, ...]]:
        state = self._state
        return state.compiled, state.warnings

    def install(self, compiled: CompiledPolicy, warnings: tuple[str, ...] = ()) -> None:
        """Swap in a policy (the watcher's, once a change is complete) in one assignment."""
        self._state = _state(compiled, warnings, self._known_config())


def _fact_problem(cell: tuple[str, ...]) -> str:
    for (fact, domain), value in zip(FACTS.items(), cell, strict=True):
        if value not in domain:
            return f"`{value}` is not a value of fact `{fact}`: {did_you_mean(value, domain)}"
    return "unknown facts"
