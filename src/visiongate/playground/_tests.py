"""The policy's own `*.test.yaml`, run against the text in the editor (`visiongate test`'s code).

A test file beside the policy that names it (`policy: default.yaml`) is run with the edited
policy in place of the file on disk: facts cases against its table, provider and model cases
through a gate that holds it. The files are the server's to find (beside the policy given at
start, or the bundled default's); the page never names one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visiongate.engine._gate import Gate
from visiongate.engine._load import CompiledPolicy
from visiongate.engine._vocabulary import all_cells, format_cell
from visiongate.engine.tooling.policytest._load import Case, load_test_file
from visiongate.engine.tooling.policytest._run import Session, run_test_file


def tests_beside(policy: Path) -> list[Path]:
    """The `*.test.yaml` files in the policy's folder that name this policy."""
    found = []
    for candidate in sorted(policy.parent.glob("*.test.yaml")):
        parsed = load_test_file(candidate)
        reference = parsed.policy
        if isinstance(reference, Path) and _same(reference, policy):
            found.append(candidate)
    return found


def _same(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:
        return False


@dataclass
class _EditedSession(Session):
    """A test run's caches, with the policy file replaced by the compiled edited text."""

    edited: Path | None = None
    compiled: CompiledPolicy | None = None

    def _is_edited(self, reference: str | Path | None) -> bool:
        return (
            isinstance(reference, Path)
            and self.edited is not None
            and _same(reference, self.edited)
        )

    def policy(self, reference: str | Path | None) -> CompiledPolicy:
        if self._is_edited(reference) and self.compiled is not None:
            return self.compiled
        return super().policy(reference)

    def gate(self, reference: str | Path | None, case: Case) -> Gate:
        gate = super().gate(reference, case)
        if self._is_edited(reference) and self.compiled is not None:
            gate.install(self.compiled)  # the gate holds the edited policy, not the file's
        return gate


def run_beside(policy: Path, compiled: CompiledPolicy) -> dict[str, Any]:
    """Every case of the tests beside `policy`, run against `compiled`, and the cells none
    of them pins."""
    session = _EditedSession(edited=policy, compiled=compiled)
    files, covered = [], set()
    for path in tests_beside(policy):
        outcome = run_test_file(load_test_file(path, path.name), session)
        cases = [
            {
                "name": o.case.name,
                "line": o.case.location.line,
                "status": o.status,
                "problems": list(o.problems),
            }
            for o in outcome.outcomes
        ]
        covered |= {cell for o in outcome.outcomes for cell in o.cells}
        problems = [d.render() for d in (*outcome.test_file.diagnostics, *outcome.policy_error)]
        files.append({"file": path.name, "cases": cases, "problems": problems})
    uncovered = [format_cell(cell) for cell in all_cells() if cell not in covered]
    return {"files": files, "uncovered": uncovered if files else []}
