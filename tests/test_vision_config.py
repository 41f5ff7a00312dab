"""`auxiliary.vision` resolution as a table of YAML cases, plus the environment checks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from visiongate.adapters.vision import (
    CachedVisionBackend,
    LocalOCRBackend,
    OpenAICompatibleBackend,
    VisionConfigError,
    VisionUnavailable,
    backend_from_config,
    parse_vision_settings,
)

CASES_FILE = Path(__file__).parent / "data" / "vision_config_cases.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))


def assert_message_style(reason: str) -> None:
    """Cedar's style: one lower-case line without a trailing period; user input in backticks."""
    outside_backticks = re.sub(r"`[^`]*`", "", reason)
    assert outside_backticks == outside_backticks.lower(), reason
    assert "\n" not in reason and not reason.endswith("."), reason


def as_plain(value: Any) -> Any:
    """Settings values as YAML would write them: tuples as lists, mappings as dicts."""
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "items"):
        return dict(value.items())
    return value


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_config_case(case: dict[str, Any]) -> None:
    config = yaml.safe_load(case["config"])
    main = case.get("main", {})
    if "want_error" in case:
        with pytest.raises(VisionConfigError) as caught:
            parse_vision_settings(config, **main)
        error = caught.value
        assert {"code": error.code, "path": error.path} == case["want_error"]
        assert_message_style(error.reason)
        if "secret" in case:
            assert case["secret"] not in error.reason + error.help
        return
    settings = parse_vision_settings(config, **main)
    for field, expected in case["want"].items():
        value: Any = settings
        for name in field.split("."):
            value = getattr(value, name)
        assert as_plain(value) == expected, field


def test_cases_cover_every_error_code() -> None:
    codes = {case["want_error"]["code"] for case in CASES if "want_error" in case}
    assert codes == {
        "vision_config_type",
        "vision_config_value",
        "vision_inline_api_key",
        "vision_main_unresolved",
        "vision_model_missing",
        "vision_provider_missing",
        "vision_unknown_provider",
    }


def test_default_is_cached_local_ocr() -> None:
    backend = backend_from_config({})
    assert isinstance(backend, CachedVisionBackend)
    assert isinstance(backend.inner, LocalOCRBackend)
    assert backend.name == "local-ocr"


def test_missing_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    config = {"auxiliary": {"vision": {"provider": "openrouter", "model": "m"}}}
    with pytest.raises(VisionConfigError) as caught:
        backend_from_config(config)
    assert caught.value.code == "vision_api_key_missing"
    assert "environment variable `OPENROUTER_API_KEY` is not set" in caught.value.reason
    assert_message_style(caught.value.reason)
    assert isinstance(caught.value, VisionUnavailable), "callers fail closed on either"


def test_first_set_key_variable_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    config = {"auxiliary": {"vision": {"provider": "gemini", "model": "gemini-2.5-flash"}}}
    backend = backend_from_config(config)
    assert isinstance(backend.inner, OpenAICompatibleBackend)
    assert backend.inner.api_key_env == "GOOGLE_API_KEY"
    assert backend.name == "openai-compatible:gemini/gemini-2.5-flash"


def test_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"auxiliary": {"vision": {"provider": "ollama", "model": "qwen2.5vl:7b"}}}
    backend = backend_from_config(config)
    assert isinstance(backend.inner, OpenAICompatibleBackend)
    assert backend.inner.api_key_env is None
    assert backend.inner.url == "http://localhost:11434/v1/chat/completions"


def test_ocr_settings_reach_the_local_backend() -> None:
    backend = backend_from_config({"auxiliary": {"vision": {"ocr": {"threads": 1}}}})
    assert isinstance(backend.inner, LocalOCRBackend)
    assert backend.inner.settings.threads == 1
    assert backend.inner.settings.det_max_side == 2000
