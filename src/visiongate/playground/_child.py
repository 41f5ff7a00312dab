"""The playground's worker process: lints, lays out, tests and routes, one request at a time.

Protocol, one JSON document per line: the server writes `{"kind": KIND, ...}` on standard
input and reads one answer line from standard output, after a first line `"ready"`. `KIND`
is `analyze`, `tests`, `route` or `format` (the text Save writes). The worker is started
with the policy file's path (or none), which it uses only to find the tests beside it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from visiongate.engine._load import CompiledPolicy
from visiongate.engine.tooling.lint._check import LintOptions

from ._analysis import Analyst, compiled_policy
from ._route import RouteTrier


@dataclass
class _Handlers:
    """The worker's state: baselines and the catalog, kept between requests."""

    policy_path: Path | None
    options: LintOptions = field(default_factory=LintOptions)
    analyst: Analyst = field(init=False)
    trier: RouteTrier = field(default_factory=RouteTrier)

    def __post_init__(self) -> None:
        self.analyst = Analyst(self.options)

    def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        kind = request.get("kind")
        if kind == "analyze":
            return self.analyst.analyze(request)
        if kind == "format":
            return _format(request, self.options)
        text, file = str(request.get("policy", "")), str(request.get("file") or "policy.yaml")
        compiled = compiled_policy(text, file)
        if compiled is None:
            return {"error": "the policy does not load: fix its errors first"}
        if kind == "tests":
            return _tests(self.policy_path, compiled)
        if kind == "route":
            return self.trier.route(compiled, request)
        return {"error": f"unknown request `{kind}`"}


def _tests(policy_path: Path | None, compiled: CompiledPolicy) -> dict[str, Any]:
    from ._tests import run_beside

    if policy_path is None:
        return {"files": [], "uncovered": []}
    return run_beside(policy_path, compiled)


def _format(request: Mapping[str, Any], options: LintOptions) -> dict[str, Any]:
    """Save's check and text: the policy must lint without errors; the text written is what
    `fmt` makes of it, comments kept."""
    from visiongate.engine.tooling.fmt._format import FormatError, format_text
    from visiongate.engine.tooling.lint._check import lint_text

    text, file = str(request.get("policy", "")), str(request.get("file") or "policy.yaml")
    found = lint_text(text, file, options).diagnostics
    errors = [d.as_dict() for d in found if d.severity == "error"]
    if errors:
        return {"error": f"not saved: the policy has {len(errors)} error(s)", "errors": errors}
    try:
        return {"text": format_text(text, file, "policy")}
    except FormatError as error:
        return {"error": f"not saved: {error}"}


def _options(argument: str) -> LintOptions:
    """The project's lint settings the server found (`[tool.visiongate.lint]`)."""
    settings = json.loads(argument)
    severity = MappingProxyType(dict(settings.get("severity") or {}))
    return LintOptions(project_severity=severity, project_fail_level=settings.get("fail_level"))


def main(arguments: list[str]) -> int:
    """Answer requests until standard input closes."""
    protocol = sys.stdout
    sys.stdout = sys.stderr  # whatever a library prints must not break the protocol
    path = Path(arguments[0]) if arguments and arguments[0] else None
    handlers = _Handlers(path, _options(arguments[1] if len(arguments) > 1 else "{}"))
    protocol.write('"ready"\n')
    protocol.flush()
    for line in sys.stdin:
        try:
            answer = handlers.answer(json.loads(line))
        except Exception as error:  # one bad request must not end the worker: it is said
            answer = {"error": f"internal error: {type(error).__name__}: {error}"}
        protocol.write(json.dumps(answer) + "\n")
        protocol.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
