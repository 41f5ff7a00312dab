"""An agent config without an `auxiliary` section is read without importing the vision
backend's checks (issue 37): it has no vision problem, as an empty section has none."""

from __future__ import annotations

import subprocess
import sys

import pytest

from visiongate.engine.facts.auxiliary import vision_setting_problems
from visiongate.engine.facts.config._config import AgentConfig

CONFIGS = [{}, {"model": "claude-sonnet-4-5"}, {"agent": {"image_input_mode": "auto"}}]


@pytest.mark.parametrize("config", CONFIGS)
def test_a_config_without_auxiliary_has_no_vision_problem(config: dict[str, object]) -> None:
    assert vision_setting_problems(config) == []
    assert vision_setting_problems({**config, "auxiliary": {}}) == []
    without = AgentConfig.from_mapping(config)
    with_empty = AgentConfig.from_mapping({**config, "auxiliary": {}})
    assert without.diagnostics == with_empty.diagnostics


def test_a_config_with_a_bad_vision_setting_still_says_so() -> None:
    config = AgentConfig.from_mapping(
        {"auxiliary": {"vision": {"provider": "openai", "model": "gpt-4o", "timeout": "soon"}}}
    )
    assert any(d.code == "invalid-vision-setting" for d in config.diagnostics)


def test_the_empty_config_imports_no_vision_checks() -> None:
    probe = (
        "import sys\n"
        "from visiongate.engine.facts.config._config import AgentConfig\n"
        "AgentConfig.empty()\n"
        "print('visiongate.engine.facts.auxiliary' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
