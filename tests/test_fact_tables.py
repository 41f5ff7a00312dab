"""Fact tables kept between processes (issue 37): the bundled catalog and registry are read
back from a validated entry keyed by their content, rebuilt on change, refused when corrupt."""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from visiongate.engine.facts import _catalog, _tables
from visiongate.engine.facts._catalog import ModelCatalog
from visiongate.engine.facts.registry import _registry
from visiongate.engine.facts.registry._registry import ProviderRegistry


@pytest.fixture
def tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("VISIONGATE_POLICY_CACHE", str(tmp_path))
    _catalog._bundled_catalog.cache_clear()
    _registry._bundled_registry.cache_clear()
    yield tmp_path / "facts"
    _catalog._bundled_catalog.cache_clear()
    _registry._bundled_registry.cache_clear()


def _fresh() -> tuple[ModelCatalog, ProviderRegistry]:
    """What a new process gets (the in-process caches emptied)."""
    _catalog._bundled_catalog.cache_clear()
    _registry._bundled_registry.cache_clear()
    return ModelCatalog.bundled(), ProviderRegistry.bundled()


def _refuse_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def parsed(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("read from its source, not from the table")

    monkeypatch.setattr(ModelCatalog, "from_text", parsed)
    monkeypatch.setattr(ProviderRegistry, "from_text", parsed)


def _answers(catalog: ModelCatalog, registry: ProviderRegistry) -> tuple[object, ...]:
    pairs = [("anthropic", "claude-sonnet-4-5"), ("openrouter", "gpt-4o:free"), ("x", "nope")]
    return (
        [catalog.lookup(*pair) for pair in pairs],
        [registry.route(*pair) for pair in pairs],
        catalog.variants,
        catalog.model_count,
        catalog.date,
        catalog.origin,
        registry.diagnostics,
    )


def test_a_second_process_reads_the_tables_and_answers_alike(
    tables: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _answers(*_fresh())
    assert len(list(tables.glob("*.table"))) == 2
    _refuse_parsing(monkeypatch)
    assert _answers(*_fresh()) == built


def test_a_changed_source_gets_a_new_entry(tables: Path) -> None:
    _fresh()
    other = ProviderRegistry.bundled()
    text = _registry.resources.files("visiongate.policies").joinpath("providers.yaml").read_text()
    changed = _tables.cached_table(
        "registry", text + "\n# edited\n", lambda: other, ProviderRegistry
    )
    assert changed is other and len(list(tables.glob("*.table"))) == 3


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "format"])
def test_a_corrupt_table_is_refused_in_one_line_and_built_again(
    tables: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    built = _answers(*_fresh())
    entries = sorted(tables.glob("*.table"), key=lambda path: path.stat().st_size)
    catalog_entry = entries[-1]  # the larger one
    raw = catalog_entry.read_bytes()
    damaged = {
        "flip": raw[:-100] + bytes([raw[-100] ^ 1]) + raw[-99:],
        "truncate": raw[: len(raw) // 2],
        "empty": b"",
        "format": b"visiongate fact table 0\n" + raw[24:],
    }[damage]
    catalog_entry.write_bytes(damaged)
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        assert _answers(*_fresh()) == built
    refused = [record.getMessage() for record in caplog.records]
    assert len(refused) == 1 and "refused, built again" in refused[0], refused
    assert "\n" not in refused[0] and str(catalog_entry) in refused[0]
    assert catalog_entry.read_bytes() == raw  # written again, whole


class _RunsCode:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("echo pwned > /dev/null",))


def test_a_table_naming_anything_but_the_engines_dataclasses_is_refused(
    tables: Path, caplog: pytest.LogCaptureFixture
) -> None:
    built = _answers(*_fresh())
    entry = min(tables.glob("*.table"), key=lambda path: path.stat().st_size)
    body = pickle.dumps(_RunsCode(), protocol=5)
    entry.write_bytes(_tables.FORMAT + hashlib.sha256(body).digest() + body)
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        assert _answers(*_fresh()) == built
    assert "is not allowed in a fact table" in caplog.text


def test_a_table_of_the_wrong_kind_is_refused(
    tables: Path, caplog: pytest.LogCaptureFixture
) -> None:
    built = _answers(*_fresh())
    entry = min(tables.glob("*.table"), key=lambda path: path.stat().st_size)  # the registry
    body = pickle.dumps(("a", "tuple"), protocol=5)
    entry.write_bytes(_tables.FORMAT + hashlib.sha256(body).digest() + body)
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        assert _answers(*_fresh()) == built
    assert "not ProviderRegistry" in caplog.text


def test_no_table_is_written_when_the_cache_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISIONGATE_POLICY_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    try:
        _fresh()
    finally:
        _catalog._bundled_catalog.cache_clear()
        _registry._bundled_registry.cache_clear()
    assert not list(tmp_path.rglob("*.table"))
