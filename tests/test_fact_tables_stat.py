"""The bundled fact tables keyed by their file's stat (issue 37): a hit reads no source, a
changed file (another size or modification time) gets a new entry, built from its text."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from visiongate.engine.facts import _tables
from visiongate.engine.facts.registry._registry import ProviderRegistry

BUNDLED = Path(_tables.__file__).parent.parent.parent / "policies" / "providers.yaml"


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("VISIONGATE_POLICY_CACHE", str(tmp_path / "cache"))
    copy = tmp_path / "providers.yaml"
    copy.write_text(BUNDLED.read_text("utf-8"), "utf-8")
    monkeypatch.setattr(_tables, "bundled_data", lambda name: copy)
    yield copy


def _table(built: list[str]) -> ProviderRegistry:
    def build(text: str) -> ProviderRegistry:
        built.append(text)
        return ProviderRegistry.from_text(text, "providers.yaml")

    return _tables.cached_bundled_table("registry", "providers.yaml", build, ProviderRegistry)


def test_a_second_read_builds_nothing_and_reads_no_source(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    first = _table(built)
    assert len(built) == 1
    original = Path.read_text

    def unread(path: Path, *args: object, **kwargs: object) -> str:
        assert path != source, "the source was read for a table hit"
        return original(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", unread)
    again = _table(built)
    assert len(built) == 1 and again.route("anthropic", "x") == first.route("anthropic", "x")


def test_a_changed_file_gets_a_new_entry_built_from_its_text(source: Path) -> None:
    built: list[str] = []
    _table(built)
    text = source.read_text("utf-8") + "\n# edited\n"
    source.write_text(text, "utf-8")
    status = source.stat()
    os.utime(source, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000))
    _table(built)
    assert built[-1] == text and len(built) == 2
    assert len(list((source.parent / "cache" / "facts").glob("*.table"))) == 2


def test_a_file_not_on_disk_is_keyed_by_its_content(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Zipped:  # what `importlib.resources` gives for a zipped installation
        def read_text(self, encoding: str) -> str:
            return source.read_text(encoding)

    monkeypatch.setattr(_tables, "bundled_data", lambda name: Zipped())
    built: list[str] = []
    _table(built)
    _table(built)
    assert len(built) == 1


def test_a_bundled_file_is_the_one_importlib_resources_names() -> None:
    from importlib import resources

    from visiongate.engine._files import bundled_data

    for name in ("providers.yaml", "catalog/models-dev.json", "default.yaml"):
        assert bundled_data(name) == resources.files("visiongate.policies") / name
