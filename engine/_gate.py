"""The gate: a compiled policy plus the fact resolver, deciding by table look-up.

Everything that can be computed before a decision is computed at load: the table, the
policy reference, the resolver's indexes. A reload builds a complete new state and swaps
it in with one assignment, so a decision always sees one consistent policy, and a policy
that fails to load never replaces the last good one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from ._compile import CellVerdict
from ._decision import Decision, DecisionContext, PolicyRef, TraceSink, TraceSpec, as_sink
from ._diagnostics import Diagnostic, PolicyError
from ._load import CompiledPolicy, compile_policy_text, read_policy_source
from ._policy import source_sha256
from ._validate import did_you_mean
from ._vocabulary import FACTS, Cell
from .facts._catalog import ModelCatalog
from .facts._config import AgentConfig
from .facts._registry import ProviderRegistry
from .facts._resolver import FactResolver, ResolvedFacts
from .facts._routes import LearnedRoute, RouteOverlay, default_routes_path

logger = logging.getLogger("visiongate")

PolicySource: TypeAlias = str | Path | None
ConfigSource: TypeAlias = str | Path | Mapping[str, Any] | AgentConfig | None
RoutesSource: TypeAlias = str | Path | bool | None


class FactError(ValueError):
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


def _state(compiled: CompiledPolicy, warnings: tuple[str, ...] = ()) -> _State:
    policy = compiled.policy
    ref = PolicyRef.of(policy)
    context = DecisionContext(ref, warnings=warnings, full_policy=policy)
    return _State(compiled, compiled.table, ref, warnings, context)


_CONTEXTS_PER_STATE = 4096


def _context(state: _State, resolved: ResolvedFacts) -> DecisionContext:
    context = DecisionContext(
        state.ref,
        resolved.provenance,
        resolved.warnings + state.warnings,
        resolved.provider,
        resolved.model,
        resolved,
        state.compiled.policy,
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
        decision = Decision(verdict, cell, state.facts_context)
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

    def reload(self) -> ReloadResult:
        """Reload the policy file if its content changed; keep the last good policy on failure."""
        with self._reload_lock:
            current = self._state
            try:
                text, file = read_policy_source(self._source)
            except PolicyError as error:
                return self._reload_failed(current, error.diagnostics, "unreadable")
            if source_sha256(text) == current.ref.sha256:
                if current.warnings:
                    self._state = _state(current.compiled)
                return ReloadResult(False, True, current.ref.sha256)
            try:
                compiled = compile_policy_text(text, file)
            except PolicyError as error:
                return self._reload_failed(current, error.diagnostics, source_sha256(text)[:12])
            self._state = _state(compiled)
            logger.info("visiongate: policy %s reloaded (sha256 %s)", file, compiled.policy.sha256)
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
        """Poll the policy file in a daemon thread and reload it when it changes."""
        if self._watcher is not None or self._source is None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                result = self.reload()
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


def _fact_problem(cell: tuple[str, ...]) -> str:
    for (fact, domain), value in zip(FACTS.items(), cell, strict=True):
        if value not in domain:
            return f"`{value}` is not a value of fact `{fact}`: {did_you_mean(value, domain)}"
    return "unknown facts"


def _catalog(catalog: str | Path | ModelCatalog | None) -> ModelCatalog:
    if isinstance(catalog, ModelCatalog):
        return catalog
    return ModelCatalog.bundled() if catalog is None else ModelCatalog.from_file(catalog)


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
