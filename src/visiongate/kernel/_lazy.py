"""Names a package exports, imported on first use (PEP 562), so importing it costs nothing;
and the package's logger, made on first use.

`visiongate`, `visiongate.engine`, `visiongate.adapters` and `visiongate.adapters.proxy`
export their public names this way: the command line and the proxy import one submodule and
must not pay for the whole package (the engine's gate, the adapters' image stage).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not `typing`'s: every command imports this module (issue 37)
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

__all__ = ["lazy_logger", "lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], exported: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name of `homes` is read from its module
    (relative to `package` when it starts with a dot) on first use, then kept."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value  # later look-ups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *exported])

    return __getattr__, __dir__


def lazy_logger(name: str) -> logging.Logger:
    """`logging.getLogger(name)`, looked up at the first call of one of its methods.

    `logging` (with `traceback`, `string`, `textwrap`) costs a command ~4 ms of start-up, and
    the engine's modules log only what goes wrong: a `decide` that goes well never imports it
    (issue 37). Every call reaches the real logger, so levels, handlers and `caplog` apply."""
    return _LazyLogger(name)  # type: ignore[return-value]  # it answers as the logger does


class _LazyLogger:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        import logging

        return getattr(logging.getLogger(self._name), attribute)
