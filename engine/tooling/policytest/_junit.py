"""`visiongate test --format junit`: a suite per test file, a case per test case, and a
`coverage` suite for the minimums that are not met."""

from __future__ import annotations

from .._junit import Case, Problem, Suite, render_junit
from ._report import TestRun
from ._run import CaseOutcome, FileOutcome


def _case(file: str, outcome: CaseOutcome) -> Case:
    details = "\n".join(outcome.problems)
    problem = Problem(outcome.status, outcome.problems[0] if outcome.problems else "", details)
    return Case(
        outcome.case.name,
        file,
        file,
        outcome.case.location.line,
        failure=problem if outcome.status == "fail" else None,
        error=problem if outcome.status == "error" else None,
    )


def _suite(outcome: FileOutcome) -> Suite:
    file = outcome.test_file.shown
    cases = [_case(file, case) for case in outcome.outcomes]
    if outcome.test_file.diagnostics:
        text = "\n".join(d.render() for d in outcome.test_file.diagnostics)
        problem = Problem("test-file", "the test file cannot be used", text)
        cases.append(Case("test file", file, file, error=problem))
    if outcome.policy_error:
        text = "\n".join(d.render() for d in outcome.policy_error)
        problem = Problem("policy", "the policy cannot be loaded", text)
        cases.append(Case("policy", file, file, error=problem))
    return Suite(file, tuple(cases))


def render_junit_run(run: TestRun) -> str:
    suites = [_suite(outcome) for outcome in run.files]
    if run.coverage_problems:
        cases = tuple(
            Case(f"minimum {index + 1}", "coverage", failure=Problem("coverage", problem))
            for index, problem in enumerate(run.coverage_problems)
        )
        suites.append(Suite("coverage", cases))
    return render_junit("visiongate test", suites)
