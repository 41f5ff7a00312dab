"""pytest plugin: visiongate policy test files are collected, one item per case.

Registered through the `pytest11` entry point, so it is active in every project that has
visiongate installed. It must never touch another project's files, so a `*.test.yaml` file
is collected only when it is a visiongate policy test:

- it declares itself with the top-level key `visiongate: policy-test` (which no other
  format uses), or
- it lies under a path listed in the ini option `visiongate_policy_tests`
  (`[tool.pytest.ini_options]` in `pyproject.toml`, or `pytest.ini`), or
- the project configuration's `tests` globs name it (`[tool.visiongate]` in
  `pyproject.toml`, or `.visiongate.yaml`): the rule `visiongate test` follows, so both run
  the same files.

A test file that declares `coverage:` minimums also yields a `coverage` item that fails below
them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from visiongate.kernel._errors import VisiongateError

TEST_SUFFIXES = (".test.yaml", ".test.yml")
INI_OPTION = "visiongate_policy_tests"
_SESSION_KEY = pytest.StashKey[Any]()
_PROJECT_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        INI_OPTION,
        "paths whose *.test.yaml files are visiongate policy tests even without the "
        "`visiongate: policy-test` key",
        type="paths",
        default=[],
    )


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if is_policy_test(file_path, parent.config):
        return PolicyTestFile.from_parent(parent, path=file_path)
    return None


def declares_policy_test(file_path: Path) -> bool:
    """The file has the top-level key `visiongate: policy-test` (read from its head only)."""
    from visiongate.engine.tooling._discover import declares_policy_test as declares
    from visiongate.engine.tooling._discover import read_head

    head = read_head(file_path)
    return head is not None and declares(head)


def is_policy_test(file_path: Path, config: pytest.Config) -> bool:
    """A `*.test.yaml` file that declares itself or lies under a configured path, or a file
    the project configuration's `tests` globs name."""
    if file_path.suffix not in (".yaml", ".yml"):
        return False
    project = _project(config)
    relative = project.relative(file_path)
    if relative is not None and project.configured_test(relative):
        return not project.excluded(relative)
    if not file_path.name.endswith(TEST_SUFFIXES):
        return False
    configured: list[Path] = config.getini(INI_OPTION)
    resolved = file_path.resolve()
    if any(resolved == root.resolve() or root.resolve() in resolved.parents for root in configured):
        return True
    return declares_policy_test(file_path)


def _project(config: pytest.Config) -> Any:
    """The project configuration around pytest's root directory (read once per session)."""
    if _PROJECT_KEY not in config.stash:
        from visiongate.engine import PolicyError
        from visiongate.engine.tooling._project import find_project

        try:
            config.stash[_PROJECT_KEY] = find_project(config.rootpath)
        except PolicyError as error:
            raise pytest.UsageError(f"visiongate: {error.render()}") from None
    return config.stash[_PROJECT_KEY]


class PolicyCaseFailure(VisiongateError):
    """A case that did not pass; carries the explanation lines."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _session(config: pytest.Config) -> Any:
    from visiongate.engine.tooling.policytest._run import Session

    if _SESSION_KEY not in config.stash:
        config.stash[_SESSION_KEY] = Session()
    return config.stash[_SESSION_KEY]


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


class PolicyTestFile(pytest.File):
    """One `*.test.yaml` file."""

    def collect(self) -> Iterator[pytest.Item]:
        from visiongate.engine.tooling.policytest._load import load_test_file

        test_file = load_test_file(self.path, _shown(self.path))
        if test_file.diagnostics:
            yield PolicyTestFileProblem.from_parent(self, name="test file", test_file=test_file)
            return
        for case in test_file.cases:
            yield PolicyCaseItem.from_parent(self, name=case.name, test_file=test_file, case=case)
        if test_file.min_rules is not None or test_file.min_cells is not None:
            yield PolicyCoverageItem.from_parent(self, name="coverage", test_file=test_file)


class _PolicyItem(pytest.Item):
    def __init__(self, *, test_file: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.test_file = test_file

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, PolicyCaseFailure):
            return "\n".join(excinfo.value.lines)
        return super().repr_failure(excinfo, style=style)

    def _policy_failure(self, error: Any) -> PolicyCaseFailure:
        lines = [f"policy `{self.test_file.policy}` cannot be loaded:"]
        return PolicyCaseFailure(lines + [d.render() for d in error.diagnostics])


class PolicyTestFileProblem(_PolicyItem):
    """Stands for a test file that cannot be read or does not follow the format."""

    def runtest(self) -> None:
        lines = [f"{self.test_file.shown} is not a valid policy test file:"]
        raise PolicyCaseFailure(lines + [d.render() for d in self.test_file.diagnostics])

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"policy test file {self.test_file.shown}"


class PolicyCaseItem(_PolicyItem):
    """One case of a policy test file."""

    def __init__(self, *, case: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        from visiongate.engine import PolicyError
        from visiongate.engine.tooling.policytest._run import run_case

        try:
            outcome = run_case(self.test_file, self.case, _session(self.config))
        except PolicyError as error:
            raise self._policy_failure(error) from None
        if outcome.status != "pass":
            head = f"{outcome.status.upper()} {self.case.name} [{self.case.location}]"
            raise PolicyCaseFailure([head, *(f"  {problem}" for problem in outcome.problems)])

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, self.case.location.line - 1, f"policy case: {self.case.name}"


class PolicyCoverageItem(_PolicyItem):
    """The coverage minimums a test file declares, checked over its own cases."""

    def runtest(self) -> None:
        from visiongate.engine import PolicyError
        from visiongate.engine.tooling.policytest._run import run_test_file

        try:
            outcome = run_test_file(self.test_file, _session(self.config))
        except PolicyError as error:
            raise self._policy_failure(error) from None
        if outcome.policy_error:
            raise PolicyCaseFailure([d.render() for d in outcome.policy_error])
        if outcome.coverage_problems:
            raise PolicyCaseFailure(list(outcome.coverage_problems))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"policy coverage: {self.test_file.shown}"
