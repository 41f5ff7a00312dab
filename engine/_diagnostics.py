"""Diagnostics are values: a stable code, a severity, a message, a location and optional help."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from visiongate.kernel._errors import VisiongateError

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True)
class Location:
    """Where a diagnostic points: a file and a 1-based line and column (0 when unknown)."""

    file: str = "<policy>"
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column}"
        return self.file


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a policy, registry, test file or trace.

    Messages follow Cedar's style: lower-case, no trailing period, user input in backticks.
    Suggestions go in `help`.
    """

    code: str
    severity: Severity
    message: str
    location: Location = field(default_factory=Location)
    document_path: tuple[str | int, ...] = ()
    help: str = ""
    cells: tuple[str, ...] = ()
    """Counterexample cells (`mode=..,catalog=..,aux=..,path=..`), for semantic findings."""
    rule: str = ""
    """The rule id the finding is about, when it is about one."""

    @property
    def path_text(self) -> str:
        return ".".join(str(part) for part in self.document_path)

    def render(self) -> str:
        """One line (plus an indented help line), the text format of the CLI."""
        where = f" ({self.path_text})" if self.document_path else ""
        text = f"{self.location}: {self.severity}[{self.code}]: {self.message}{where}"
        if self.cells:
            shown = ", ".join(self.cells[:4])
            more = f" and {len(self.cells) - 4} more" if len(self.cells) > 4 else ""
            text += f"\n  cells: {shown}{more}"
        if self.help:
            text += f"\n  help: {self.help}"
        return text

    def warning_text(self) -> str:
        """The finding as a decision record's `warnings` carry it: `file:line:col: message;
        help` (an error starts with `error: `)."""
        text = f"{self.location}: {self.message}"
        text = f"error: {text}" if self.severity == "error" else text
        return f"{text}; {self.help}" if self.help else text

    def as_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.location.file,
            "line": self.location.line,
            "column": self.location.column,
            "path": self.path_text,
            "help": self.help,
            "cells": list(self.cells),
            "rule": self.rule,
        }


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)


class PolicyError(VisiongateError):
    """A policy (or provider registry) that cannot be used; carries every diagnostic found."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"] or list(self.diagnostics)
        first = errors[0].render().splitlines()[0] if errors else "invalid policy"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first + more)

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)
