"""What the operator must read, said where they look: standard error, once.

A decision's warnings (the config's near misses and fail-closed errors, the did-you-mean for a
provider or model nobody knows, the operator's own contradictions) are in every record the
gate writes, but nobody reads a trace they did not ask for: `visiongate proxy --provider
openruter` kept images out with nothing on stderr. The proxy says them at start for its
target; the gateway for its default target at start, and for each other target a session
names (`X-Visiongate-Provider`), once per target, when the session opens.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Final

from visiongate.kernel._display import visible

if TYPE_CHECKING:
    from visiongate.engine import Gate

__all__ = ["NoticeBoard", "target_notices"]

MAX_TARGETS: Final = 1024
"""Targets remembered as already said (they come from clients' headers: bounded)."""


def target_notices(
    gate: Gate, provider: str, model: str, *, with_config: bool = True
) -> tuple[str, ...]:
    """One line per warning of the decisions for this target (`error: ...` for a mistake the
    gate fails closed on), safe to print; without the config's own warnings, which concern
    every target, unless `with_config`. Resolving may ask a local runtime (bounded, and cached
    for the decisions that follow)."""
    warnings = gate.resolver.resolve(provider, model).warnings
    said = () if with_config else gate.resolver.config.decision_warnings
    return tuple(
        visible(text if text.startswith("error: ") else f"warning: {text}")
        for text in dict.fromkeys(warnings)
        if text not in said
    )


class NoticeBoard:
    """Which targets were said already, so each is said once per process."""

    def __init__(self) -> None:
        self._said: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def first_time(self, provider: str, model: str) -> bool:
        """True the first time a target is seen (and while the board is not full)."""
        key = (provider, model)
        with self._lock:
            if key in self._said or len(self._said) >= MAX_TARGETS:
                return False
            self._said.add(key)
            return True
