"""`visiongate test` and the pytest plugin: *.test.yaml files, explained failures, coverage."""

from __future__ import annotations

from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine.tooling.policytest._load import parse_facts_text, parse_test_text
from visiongate.engine.tooling.policytest._report import render_text, run_tests

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parent.parent
POLICY = (ROOT / "policies" / "default.yaml").read_text()


def _write(tmp_path: Path, cases: str, *, header: str = "policy: default.yaml\n") -> Path:
    (tmp_path / "default.yaml").write_text(POLICY)
    target = tmp_path / "p.test.yaml"
    target.write_text(header + "cases:\n" + cases)
    return target


def test_shipped_policies_pass_with_full_rule_and_cell_coverage() -> None:
    run = run_tests([ROOT / "policies"], min_rules=100, min_cells=100)
    assert run.ok, render_text(run)
    names = {coverage.name for coverage in run.coverage}
    assert {"default", "never-pixels", "describe-mcp", "trust-unknown-aliases"} <= names
    for coverage in run.coverage:
        assert coverage.rule_percent == 100 and coverage.cell_percent == 100, coverage.name


def test_facts_text_forms() -> None:
    assert parse_facts_text("mode=auto,catalog=vision|unknown") == {
        "mode": ["auto"],
        "catalog": ["vision", "unknown"],
    }
    assert parse_facts_text("mode=auto path=accepts") == {"mode": ["auto"], "path": ["accepts"]}
    assert parse_facts_text("not facts") == "not facts"


def test_a_failing_case_explains_lane_rule_and_reason(tmp_path: Path) -> None:
    cases = (
        "  - {facts: mode=auto catalog=vision aux=unset path=accepts,\n"
        "     expect: {lane: text, rule: text-mode}}\n"
    )
    run = run_tests([_write(tmp_path, cases)])
    [outcome] = run.outcomes
    assert outcome.status == "fail"
    text = "\n".join(outcome.problems)
    assert "expected lane `text`, got `native`" in text
    assert "expected rule `text-mode`, got rule `auto-vision-model`" in text
    assert "the catalog says this model reads images" in text
    assert not run.ok


def test_a_partial_facts_case_names_the_failing_cells(tmp_path: Path) -> None:
    run = run_tests([_write(tmp_path, "  - {facts: mode=native, expect: {lane: native}}\n")])
    [outcome] = run.outcomes
    assert len(outcome.cells) == 18
    assert outcome.problems[0] == "6 of 18 cell(s) differ"
    assert "mode=native,catalog=vision,aux=set,path=refuses" in "\n".join(outcome.problems)


def test_expected_default_and_unknown_rule(tmp_path: Path) -> None:
    cases = (
        "  - {facts: mode=text, expect: {lane: text, rule: null}}\n"
        "  - {facts: mode=text, expect: {lane: text, rule: txt-mode}}\n"
    )
    first, second = run_tests([_write(tmp_path, cases)]).outcomes
    assert (
        first.status == "fail" and "expected the default, got rule `text-mode`" in first.problems[1]
    )
    assert second.status == "error"
    assert "did you mean `text-mode`?" in second.problems[0]


def test_resolved_case_checks_facts_with_provenance(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agent:\n  image_input_mode: native\n")
    cases = (
        "  - provider: openai\n    model: gpt-4o\n    config: agent.yaml\n"
        "    expect: {lane: native, rule: native-mode, facts: {mode: native, catalog: unknown}}\n"
    )
    [outcome] = run_tests([_write(tmp_path, cases)]).outcomes
    assert outcome.status == "fail"
    assert outcome.problems[0].startswith("fact `catalog`: expected `unknown`, got `vision` (")
    assert outcome.cells == (("native", "vision", "unset", "accepts"),)


def test_coverage_lists_rules_not_exercised_and_fails_below_threshold(tmp_path: Path) -> None:
    path = _write(tmp_path, "  - {facts: mode=text, expect: {lane: text}}\n")
    run = run_tests([path], min_rules=100)
    [coverage] = run.coverage
    assert coverage.exercised == {"text-mode"}
    assert len(coverage.cells) == 18
    assert "native-mode" in coverage.missing_rules
    assert run.coverage_problems and not run.ok
    assert run_tests([path], min_rules=10).ok


def test_file_level_coverage_minimum(tmp_path: Path) -> None:
    header = "policy: default.yaml\ncoverage: {rules: 100}\n"
    path = _write(tmp_path, "  - {facts: mode=text, expect: {lane: text}}\n", header=header)
    run = run_tests([path])
    assert run.coverage_problems and "rule coverage of `default` is 14%" in run.coverage_problems[0]


@pytest.mark.parametrize(
    ("body", "code", "line"),
    [
        ("policy: default\ncases:\n  - {expect: {lane: text}}\n", "missing-key", 3),
        (
            "policy: default\ncases:\n  - {facts: mode=txt, expect: {lane: text}}\n",
            "unknown-value",
            3,
        ),
        (
            "policy: default\ncases:\n  - {facts: {mode: text}, expect: {lane: pixels}}\n",
            "unknown-value",
            3,
        ),
        (
            "policy: default\ncases:\n"
            "  - {facts: {mode: text}, provider: a, model: b, expect: {lane: text}}\n",
            "invalid-value",
            3,
        ),
        (
            "policy: default\ncases:\n  - {provider: openai, expect: {lane: text}}\n",
            "missing-key",
            3,
        ),
        ("policy: default\ncasez: []\n", "unknown-key", 2),
    ],
)
def test_malformed_test_files_give_located_diagnostics(body: str, code: str, line: int) -> None:
    parsed = parse_test_text(body, Path("t.test.yaml"), "t.test.yaml")
    found = [(d.code, d.location.line) for d in parsed.diagnostics]
    assert (code, line) in found, [d.render() for d in parsed.diagnostics]


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(ROOT / "policies"), "--min-coverage", "100"]) == 0
    failing = _write(tmp_path, "  - {facts: mode=text, expect: {lane: native}}\n")
    assert main(["test", str(failing)]) == 1
    assert "FAIL" in capsys.readouterr().out
    (tmp_path / "default.yaml").write_text(POLICY.replace("lane: native", "lane: nativ", 1))
    assert main(["test", str(failing)]) == 3
    assert "unknown lane `nativ`" in capsys.readouterr().out
    assert main(["test", str(tmp_path / "nothing-here")]) == 2
    assert main(["test", "--json", str(ROOT / "policies" / "default.test.yaml")]) == 0
    assert '"ok": true' in capsys.readouterr().out


def test_pytest_collects_cases_as_items(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", default=POLICY)
    pytester.makefile(
        ".test.yaml",
        p=(
            "visiongate: policy-test\n"
            "policy: default.yaml\n"
            "coverage: {rules: 100}\n"
            "cases:\n"
            "  - {name: text mode, facts: mode=text, expect: {lane: text, rule: text-mode}}\n"
            "  - {name: wrong, facts: mode=native path=accepts, expect: {lane: text}}\n"
        ),
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*FAIL wrong*",
            "*expected lane `text`, got `native`*",
            "*rule coverage of `default` is 29%, below 100%*",
        ]
    )


UNDECLARED_CASES = (
    "policy: default.yaml\n"
    "cases:\n"
    "  - {name: text mode, facts: mode=text, expect: {lane: text, rule: text-mode}}\n"
)


def test_pytest_plugin_never_collects_other_projects_test_yaml(pytester: pytest.Pytester) -> None:
    """Another project's `docker-compose.test.yaml`, and even an undeclared file that looks
    like a policy test, are left alone: visiongate is installed, yet nothing is collected."""
    pytester.makefile(
        ".test.yaml",
        **{"docker-compose": "services:\n  web:\n    image: nginx\npolicy: not ours\n"},
    )
    pytester.makefile(".yaml", default=POLICY)
    pytester.makefile(".test.yaml", lookalike=UNDECLARED_CASES)
    result = pytester.runpytest("-p", "no:cacheprovider", "-q")
    result.assert_outcomes()
    assert "docker-compose" not in result.stdout.str()


def test_pytest_plugin_collects_undeclared_files_under_configured_paths(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nvisiongate_policy_tests = policies\n")
    folder = pytester.mkdir("policies")
    (folder / "default.yaml").write_text(POLICY)
    (folder / "mine.test.yaml").write_text(UNDECLARED_CASES)
    (pytester.path / "outside.test.yaml").write_text(UNDECLARED_CASES)
    result = pytester.runpytest("-p", "no:cacheprovider", "-q", "-rA")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*policies/mine.test.yaml*text mode*"])


def test_declared_file_with_quoted_marker_and_comment_is_collected(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", default=POLICY)
    pytester.makefile(".test.yaml", p="visiongate: 'policy-test'  # ours\n" + UNDECLARED_CASES)
    pytester.runpytest("-p", "no:cacheprovider", "-q").assert_outcomes(passed=1)
