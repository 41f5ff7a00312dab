"""Finding a project's policies and tests: never a silent pass, the conventions of ruff and
Regal (a project configuration, include/exclude, a named file always linted) (issue 14)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from _cli_helpers import POLICIES, run

from visiongate.engine import PolicyError
from visiongate.engine.tooling._discover import find_policies, looks_like_policy
from visiongate.engine.tooling._project import find_project

pytest_plugins = ["pytester"]

POLICY = (POLICIES / "default.yaml").read_text()
MISSPELT = POLICY.replace("policy: default", "polcy: default", 1)
UNRELATED = "policy: allow-all\nversion: 3\nrules:\n  - host: example.org\n    action: allow\n"
TEST_FILE = (POLICIES / "examples" / "never-pixels.test.yaml").read_text()
CHECKS = """\
policy: ../policies/mine.yaml
cases:
  - {name: text mode, facts: mode=text, expect: {lane: text, rule: text-mode}}
  - {name: wrong on purpose, facts: mode=native path=accepts, expect: {lane: text}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project of its own (the working directory), with no configuration yet."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_lint_of_an_empty_directory_exits_2_instead_of_passing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "empty").mkdir()
    code, out, err = run(capsys, "lint", "empty")
    assert (code, out) == (2, "")
    assert "no policy files found under `empty`; check include/exclude" in err


def test_lint_with_no_path_lints_the_project_not_the_bundled_policies(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "lint")
    assert code == 2 and "no policy files found under" in err
    (project / "policies").mkdir()
    (project / "policies" / "mine.yaml").write_text(POLICY)
    code, out, _err = run(capsys, "lint", "--format", "json")
    assert code == 0
    assert "site-packages" not in out and "policies/mine.yaml" in out


def test_a_misspelt_policy_key_is_found_by_directory_lint_policies_only_and_the_hook(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "policies").mkdir()
    misspelt = project / "policies" / "typo.yaml"
    misspelt.write_text(MISSPELT)
    for argv in (["lint", "policies"], ["lint", "--strict", "--policies-only", str(misspelt)]):
        code, out, _err = run(capsys, *argv)
        assert code == 1, argv
        assert "typo.yaml:25:1: error[unknown-key]: unknown key `polcy`" in out
        assert "1 file(s) linted: 2 error(s)" in out


def test_unrelated_yaml_with_a_top_level_policy_key_is_not_a_policy(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "config").mkdir()
    (project / "config" / "firewall.yaml").write_text(UNRELATED)
    (project / "config" / "real.yaml").write_text(POLICY)
    code, out, _err = run(capsys, "lint", "config")
    assert code == 0 and "firewall.yaml" not in out and "1 file(s) linted" in out
    assert not looks_like_policy(UNRELATED) and looks_like_policy(MISSPELT)
    code, out, _err = run(capsys, "lint", "--policies-only", "config/firewall.yaml")
    assert code == 0 and "0 file(s) linted" in out


def test_a_file_named_on_the_command_line_is_always_linted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "firewall.yaml").write_text(UNRELATED)
    (project / ".visiongate.yaml").write_text("exclude: [firewall.yaml]\n")
    code, out, _err = run(capsys, "lint", "firewall.yaml")
    assert code == 1 and "error[missing-key]" in out


PYPROJECT = """\
[tool.visiongate]
include = ["policies/**/*.yaml"]
exclude = ["policies/drafts"]
tests = ["checks/*.yaml"]
docs = "pages"

[tool.visiongate.lint]
severity = { missing-invariants = "warning" }
fail_level = "warning"
"""


def _configured(project: Path, *, yaml: bool) -> None:
    for folder in ("policies/drafts", "checks", "elsewhere"):
        (project / folder).mkdir(parents=True)
    (project / "policies" / "mine.yaml").write_text(POLICY)
    (project / "policies" / "drafts" / "draft.yaml").write_text(MISSPELT)
    (project / "elsewhere" / "other.yaml").write_text(POLICY)
    (project / "checks" / "mine.yaml").write_text(CHECKS)  # undeclared: the globs name it
    if yaml:
        (project / ".visiongate.yaml").write_text(
            textwrap.dedent(
                """\
                include: ["policies/**/*.yaml"]
                exclude: [policies/drafts]
                tests: ["checks/*.yaml"]
                docs: pages
                lint:
                  severity: {missing-invariants: warning}
                  fail_level: warning
                """
            )
        )
    else:
        (project / "pyproject.toml").write_text(PYPROJECT)


@pytest.mark.parametrize("yaml", [False, True], ids=["pyproject.toml", ".visiongate.yaml"])
def test_the_project_configuration_sets_include_exclude_tests_docs_and_levels(
    yaml: bool, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configured(project, yaml=yaml)
    found = find_policies(find_project())
    assert [p.relative_to(project).as_posix() for p in found.files] == ["policies/mine.yaml"]
    code, out, _err = run(capsys, "test")
    assert code == 1 and "checks/mine.yaml" in out and "FAIL  wrong on purpose" in out
    assert run(capsys, "docs")[0] == 0
    assert (project / "pages" / "mine.md").is_file()
    (project / "policies" / "mine.yaml").write_text(POLICY.split("invariants:")[0])
    code, out, _err = run(capsys, "lint")
    assert code == 1, out  # missing-invariants raised to warning, failing at warning
    assert "warning[missing-invariants]" in out


def test_levels_the_policy_sets_itself_win_over_the_project(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".visiongate.yaml").write_text("lint: {severity: {missing-invariants: error}}\n")
    body = POLICY.split("invariants:")[0] + "lint:\n  severity: {missing-invariants: ignore}\n"
    (project / "p.yaml").write_text(body)
    code, out, _err = run(capsys, "lint", "p.yaml")
    assert code == 0 and "missing-invariants" not in out


@pytest.mark.parametrize(
    "config,message",
    [
        ("incude: [x]\n", "unknown key `incude` (`incude`)"),
        ("include: 3\n", "expected a list of glob patterns"),
        ("lint: {severity: {gapp: error}}\n", "unknown lint code `gapp`"),
        ("lint: {severity: {overlap: warning}}\n", "`overlap` is a load error"),
        ("lint: {fail_level: loud}\n", "unknown level `loud`"),
        ("include: [x\n", "error[yaml-syntax]"),
    ],
)
def test_a_bad_project_configuration_exits_3_naming_the_file(
    config: str, message: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".visiongate.yaml").write_text(config)
    for command in ("lint", "test", "fmt", "docs"):
        code, out, err = run(capsys, command)
        assert (code, out) == (3, ""), (command, err)
        assert ".visiongate.yaml" in err and message in err, (command, err)


def test_a_bad_pyproject_table_exits_3(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.visiongate]\nexclude = "x"\nincude = []\n')
    code, _out, err = run(capsys, "lint")
    assert code == 3 and "pyproject.toml: error[bad-project-config]" in err
    assert "unknown key `incude` (`tool.visiongate.incude`)" in err
    with pytest.raises(PolicyError):
        find_project()


def test_an_undeclared_test_file_is_reported_as_skipped_not_ignored_silently(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "never-pixels.yaml").write_text(
        (POLICIES / "examples" / "never-pixels.yaml").read_text()
    )
    (project / "x.test.yaml").write_text(TEST_FILE.replace("visiongate: policy-test\n", ""))
    code, _out, err = run(capsys, "test")
    assert code == 2
    assert "warning: skipped `" in err and "does not declare `visiongate: policy-test`" in err
    assert "no policy test files found under" in err


def test_pytest_and_visiongate_test_collect_the_same_configured_files(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The project's `tests` globs feed the pytest plugin as they feed `visiongate test`."""
    _configured(pytester.path, yaml=False)
    result = pytester.runpytest("-p", "no:cacheprovider", "-q", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*checks/mine.yaml*text mode*"])
    code, out, _err = run(capsys, "test", "--format", "json")
    assert code == 1 and '"pass": 1' in out and '"fail": 1' in out


def test_build_output_and_virtual_environments_are_not_searched(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `pip install .` leaves `build/lib/.../policies/*.test.yaml` in the checkout: as in
    ruff's default `exclude`, build, dist and venv folders are never searched."""
    for folder in ("build/lib/pkg", "dist", "venv/lib", "policies"):
        (project / folder).mkdir(parents=True)
        (project / folder / "copy.yaml").write_text(POLICY)
    code, out, _err = run(capsys, "lint", "--format", "json")
    files = [item["file"] for item in json.loads(out)["files"]]
    assert code == 0 and files == ["policies/copy.yaml"]
