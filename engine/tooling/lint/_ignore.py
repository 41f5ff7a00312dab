"""Inline exemptions: `# visiongate: ignore[code, ...] because <reason>`.

As in Regal, an inline ignore takes precedence over every configured level. It applies to
the line it ends, or, written on a line of its own, to the next line that is not a comment.
A finding about a rule is also exempted by an ignore aimed at the rule's first line (its
`- id:` line). The reason is required: an exemption is a decision an auditor will read,
so one without `because ...` is reported and not applied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from visiongate.kernel._suggest import did_you_mean

from ..._diagnostics import Diagnostic, Location
from ._codes import LINT_CODES, lint_code

_DIRECTIVE = re.compile(r"(?:^|\s)#\s*visiongate\s*:\s*(?P<body>.*)$")
_IGNORE = re.compile(r"^ignore\[(?P<codes>[^\]]*)\]\s*(?:because\b\s*(?P<reason>.*))?$")


@dataclass(frozen=True)
class IgnoreComment:
    """One parsed ignore comment."""

    location: Location
    target_line: int
    codes: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Suppressed:
    """A finding an ignore comment exempted, kept for SARIF and JSON (auditors see it)."""

    diagnostic: Diagnostic
    reason: str
    comment: Location


def _target_line(lines: Sequence[str], index: int, trailing: bool) -> int:
    if trailing:
        return index + 1
    for following in range(index + 1, len(lines)):
        stripped = lines[following].strip()
        if stripped and not stripped.startswith("#"):
            return following + 1
    return index + 1


def parse_ignores(text: str, file: str) -> tuple[list[IgnoreComment], list[Diagnostic]]:
    """Every `# visiongate:` comment: the valid ignores, and diagnostics for the others."""
    lines = text.splitlines()
    ignores: list[IgnoreComment] = []
    problems: list[Diagnostic] = []
    for index, line in enumerate(lines):
        match = _DIRECTIVE.search(line)
        if match is None:
            continue
        start = match.start() + (0 if line[match.start()] == "#" else 1)
        location = Location(file, index + 1, start + 1)
        trailing = bool(line[:start].strip())
        found = _parse_body(match.group("body").strip(), location)
        if isinstance(found, Diagnostic):
            problems.append(found)
            continue
        codes, reason = found
        problems.extend(_code_problems(codes, location))
        usable = tuple(c for c in codes if c in LINT_CODES and not lint_code(c).fixed)
        if usable:
            target = _target_line(lines, index, trailing)
            ignores.append(IgnoreComment(location, target, usable, reason))
    return ignores, problems


def _bad(location: Location, message: str, help_text: str) -> Diagnostic:
    return Diagnostic("bad-ignore", "warning", message, location, help=help_text)


def _parse_body(body: str, location: Location) -> tuple[tuple[str, ...], str] | Diagnostic:
    match = _IGNORE.match(body)
    form = "write `# visiongate: ignore[code] because <reason>`"
    if match is None:
        return _bad(location, f"cannot read the directive `{body}`", form)
    codes = tuple(code.strip() for code in match.group("codes").split(",") if code.strip())
    if not codes:
        return _bad(location, "the ignore names no code", form)
    reason = (match.group("reason") or "").strip()
    if not reason:
        return _bad(
            location,
            "the ignore gives no reason, so it is not applied",
            "add `because <reason>`: exemptions are read by auditors",
        )
    return codes, reason


def _code_problems(codes: Iterable[str], location: Location) -> list[Diagnostic]:
    problems = []
    for code in codes:
        if code not in LINT_CODES:
            problems.append(
                _bad(location, f"unknown lint code `{code}`", did_you_mean(code, list(LINT_CODES)))
            )
        elif lint_code(code).fixed:
            problems.append(
                _bad(
                    location,
                    f"`{code}` is a load error and cannot be ignored",
                    "the gate refuses a policy with this error; fix the policy instead",
                )
            )
    return problems


def apply_ignores(
    diagnostics: Sequence[Diagnostic],
    ignores: Sequence[IgnoreComment],
    rule_lines: Mapping[str, int],
    unchecked: frozenset[str] = frozenset(),
) -> tuple[list[Diagnostic], list[Suppressed], list[Diagnostic]]:
    """(kept, suppressed, unused-ignore diagnostics). An ignore of a code in `unchecked`, whose
    check could not run (the table of a policy that fails to load), is not called unused: its
    finding did not go away, it was not looked for."""
    kept: list[Diagnostic] = []
    suppressed: list[Suppressed] = []
    used: set[tuple[int, str]] = set()
    for diagnostic in diagnostics:
        ignore = _matching_ignore(diagnostic, ignores, rule_lines)
        if ignore is None:
            kept.append(diagnostic)
            continue
        used.add((ignore.location.line, diagnostic.code))
        suppressed.append(Suppressed(diagnostic, ignore.reason, ignore.location))
    unused = [
        Diagnostic(
            "unused-ignore",
            "warning",
            f"`ignore[{code}]` suppresses nothing on line {ignore.target_line}",
            ignore.location,
            help="remove it: the finding it exempted is gone",
        )
        for ignore in ignores
        for code in ignore.codes
        if (ignore.location.line, code) not in used and code not in unchecked
    ]
    return kept, suppressed, unused


def _matching_ignore(
    diagnostic: Diagnostic, ignores: Sequence[IgnoreComment], rule_lines: Mapping[str, int]
) -> IgnoreComment | None:
    if lint_code(diagnostic.code).fixed:
        return None
    lines = {diagnostic.location.line}
    if diagnostic.rule in rule_lines:
        lines.add(rule_lines[diagnostic.rule])
    return next((i for i in ignores if diagnostic.code in i.codes and i.target_line in lines), None)
