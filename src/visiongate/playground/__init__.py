"""`visiongate playground`: a local web page to edit a policy and watch every cell change.

The page (`static/`: plain HTML, CSS and JavaScript, nothing fetched from elsewhere) edits the
policy and an agent config; the server (`_server`, the standard library's HTTP server on
loopback) answers with what the commands would say, computed by their own code in a worker
process (`_worker`): `lint`'s diagnostics and the table with `diff`'s changes (`_analysis`),
`test`'s outcomes for the tests beside the policy (`_tests`), `decide --explain` and `route`
for a provider and model (`_route`). Save (`_save`) writes what `fmt` makes of the policy
back to the file given at start, once it lints clean.
"""

from __future__ import annotations

from pathlib import Path

from ._server import Playground, address, bind

__all__ = ["Playground", "address", "bind", "open_playground"]


def open_playground(policy: str | None, config: str | None) -> Playground:
    """The playground for a policy file or bundled name (None: the bundled default) and an
    agent config file, with the lint settings of the project found from the working directory.
    Raises `PolicyError` for a policy file that cannot be read, `OSError` for a config that
    cannot, and the project's error for a bad `[tool.visiongate]`."""
    from importlib import resources

    from visiongate.engine._load import read_policy_source
    from visiongate.engine._yaml import DEFAULT_LIMITS
    from visiongate.engine.tooling._discover import display_path
    from visiongate.engine.tooling._project import find_project
    from visiongate.kernel._files import read_regular_file

    text, file = read_policy_source(policy)
    config_text = read_regular_file(config, DEFAULT_LIMITS.max_bytes).decode() if config else ""
    project = find_project()  # `lint`'s levels for this project apply, as on the command line
    lint = {"severity": dict(project.severity), "fail_level": project.fail_level}
    shown_config = display_path(config) if config else "config.yaml"
    bundled = policy is None or (file.startswith("policies/") and not Path(policy).is_file())
    if bundled:
        folder = Path(str(resources.files("visiongate.policies")))
        tests_path = folder / file.removeprefix("policies/")
        return Playground(text, file, config_text, None, tests_path, lint, shown_config)
    path = Path(str(policy))
    return Playground(text, display_path(path), config_text, path, path, lint, shown_config)
