"""Names a package exports, imported on first use (PEP 562).

The command line and the proxy import one submodule and must not pay for the whole package
(the engine's gate, the adapters' image stage): a package lists where each public name lives
and gets its `__getattr__` and `__dir__` from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, str], names: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name of `homes` is imported from its
    module (relative to the package) when first asked for, then kept as a plain attribute."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value  # later look-ups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *names])

    return __getattr__, __dir__
