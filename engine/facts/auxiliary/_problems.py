"""Every problem of `auxiliary.vision`, not only the first: what `lint --config` and each
decision's config findings report (`vision_setting_problems`), from the same checks the
backend runs when it starts (`parse_vision_settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._ocr import VisionSettingError
from ._vision import PATH, parse_vision_settings, vision_section

__all__ = ["vision_setting_problem", "vision_setting_problems"]

_MAIN_PLACEHOLDER_URL: Final = "http://main.invalid/v1"
_PLACEHOLDERS: Final = {
    "provider": "custom",
    "model": "model",
    "base_url": "http://vision.invalid/v1",
}


def vision_setting_problem(config: Mapping[str, Any]) -> VisionSettingError | None:
    """What the backend would refuse in the config's `auxiliary.vision` (its first problem,
    as `parse_vision_settings` raises it), None when the settings are usable. The main
    model's provider is known only at run time (a command's `--provider`), so `provider: main`
    is checked as if it resolved to a server at an address: its values still are."""
    try:
        parse_vision_settings(
            config,
            main_provider="custom",
            main_model="main",
            main_base_url=_MAIN_PLACEHOLDER_URL,
        )
    except VisionSettingError as error:
        return error
    return None


def vision_setting_problems(config: Mapping[str, Any]) -> list[VisionSettingError]:
    """Every problem `vision_setting_problem` finds, not only the first: after each, the key
    it names is set aside (an identity key, `provider`, `model` or `base_url`, given a
    placeholder so the rest is still checked as for a server) and the settings checked again.
    An operator with three typos hears of three, in one run."""
    problems: list[VisionSettingError] = []
    current: Any = config
    while (problem := vision_setting_problem(current)) is not None:
        if any(seen.path == problem.path for seen in problems):
            break  # setting the key aside did not help: say it once
        problems.append(problem)
        current = _set_aside(current, problem.path)
        if current is None:
            break
    return problems


def _set_aside(config: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    """`config` without the value at `path` (a placeholder for an identity key); None when the
    problem is the section itself, and nothing past it can be checked."""
    prefix = f"{PATH}."
    if not path.startswith(prefix):
        return None
    keys = path[len(prefix) :].split(".")
    section = dict(vision_section(config))
    level = section
    for key in keys[:-1]:
        child = level.get(key)
        if not isinstance(child, Mapping):
            return None
        copied = dict(child)
        level[key] = copied
        level = copied
    leaf = keys[-1]
    if level is section and leaf in _PLACEHOLDERS:
        section[leaf] = _PLACEHOLDERS[leaf]
        if leaf == "provider" and not isinstance(section.get("base_url"), str):
            section["base_url"] = _PLACEHOLDERS["base_url"]
    else:
        level.pop(leaf, None)
    auxiliary = dict(config.get("auxiliary") or {})
    auxiliary["vision"] = section
    return {**config, "auxiliary": auxiliary}
