"""One root for every exception visiongate raises (issue 29): `except VisiongateError` catches
them all, and each keeps the built-in base its callers already catch."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import visiongate
import visiongate.adapters
import visiongate.engine
from visiongate import VisiongateError

# Each public exception class, by name, and the built-in base it kept (or None).
BUILT_IN_BASES: dict[str, type[BaseException] | None] = {
    "VisiongateError": None,
    "PolicyError": None,
    "FactError": ValueError,
    "CompileError": RuntimeError,
    "LoadAbort": None,
    "MissingPathError": ValueError,
    "InputError": None,
    "SourceError": ValueError,
    "FormatError": ValueError,
    "NotPolicyError": ValueError,
    "ListingError": ValueError,
    "Refusal": None,
    "PartError": ValueError,
    "VisionUnavailable": None,
    "VisionConfigError": None,
    "VisionSettingError": ValueError,
    "ClientGone": ConnectionError,
    "UpstreamClosed": ConnectionError,
    "MessageTooLarge": ValueError,
    "ServerError": None,  # and the MCP SDK's `MCPError`, checked below
    "McpSdkMissing": ImportError,
    "InvalidToolResult": ValueError,
    "PolicyCaseFailure": None,
    "Interrupted": None,
    "StdoutError": None,
    "CommandExit": None,
    "UsageError": None,
    "ArgumentError": ValueError,
    "FetchError": None,
    "CatalogUpdateError": None,
    "JsonTooDeep": ValueError,
    "SpawnError": OSError,
    "LineTooLong": ValueError,
    "SaveRefused": None,
    "WorkerTimeout": None,
}


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in the package, by name (private names left out)."""
    found: dict[str, type[BaseException]] = {}
    # The stages are mapped under the package from their own folders: walk each one.
    names = [
        info.name
        for package in (visiongate, visiongate.engine, visiongate.adapters)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
        if not info.name.endswith("__main__")
    ]
    for name in names:
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not attribute.startswith("_")
            ):
                found[attribute] = value
    return found


FOUND = _exception_classes()


def test_the_table_names_every_exception_class_of_the_package() -> None:
    assert sorted(FOUND) == sorted(BUILT_IN_BASES)


@pytest.mark.parametrize("name", sorted(BUILT_IN_BASES))
def test_every_exception_is_a_visiongate_error_and_keeps_its_built_in_base(name: str) -> None:
    cls = FOUND[name]
    assert issubclass(cls, VisiongateError)
    built_in = BUILT_IN_BASES[name]
    if built_in is not None:
        assert issubclass(cls, built_in)


def test_a_server_error_is_still_the_sdks_mcp_error() -> None:
    from mcp import MCPError

    assert issubclass(FOUND["ServerError"], MCPError)


def test_one_except_catches_what_the_engine_and_the_adapters_raise() -> None:
    from visiongate import FactError, Gate, PolicyError, load_policy

    with pytest.raises(VisiongateError) as caught:
        Gate.load().decide_facts("auto", "vision", "unset", "acepts")
    assert isinstance(caught.value, FactError) and isinstance(caught.value, ValueError)
    with pytest.raises(VisiongateError) as caught:
        load_policy("nosuchpolicy")
    assert isinstance(caught.value, PolicyError)
