"""`visiongate lint`: every load diagnostic plus exact semantic checks, levels and ignores.

Stages, each adding diagnostics (as the loader does): load and compile → table checks →
source checks → levels from `lint.severity` and the command line → inline ignores.
Detection ends here; `_report` renders the result as text, JSON, GitHub or SARIF.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from visiongate.kernel._files import read_regular_file

from ..._diagnostics import SEVERITY_RANK, Diagnostic, Location, PolicyError, Severity
from ..._load import CompiledPolicy, analyze_policy_text
from ..._yaml import DEFAULT_LIMITS, LoadedYaml, load_yaml, read_source_file
from .._discover import display_path, find_policies
from .._project import Project, find_project
from ._codes import LINT_CODES, lint_code
from ._ignore import Suppressed, apply_ignores, parse_ignores
from ._source import boolean_words, lint_settings, unquoted_version
from ._table import table_diagnostics
from ._text_fields import deprecated_settings, invisible_text


@dataclass(frozen=True)
class LintOptions:
    """What the command line and the project configuration add to a policy's `lint:` section.

    Precedence, as in ruff and Regal: the command line, then the policy file's own `lint:`,
    then the project configuration (`[tool.visiongate.lint]`), then each code's default."""

    severity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """code -> error|warning|info|ignore; wins over the policy's `lint.severity`."""
    fail_level: str | None = None
    """error|warning|info; None: the policy's `lint.fail_level`, else the project's, else
    `error`."""
    project_severity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    project_fail_level: str | None = None

    @classmethod
    def for_project(
        cls, project: Project, severity: Mapping[str, str], fail_level: str | None
    ) -> LintOptions:
        return cls(
            MappingProxyType(dict(severity)), fail_level, project.severity, project.fail_level
        )


@dataclass(frozen=True)
class FileReport:
    """The findings for one policy file."""

    file: str
    diagnostics: tuple[Diagnostic, ...]
    suppressed: tuple[Suppressed, ...] = ()
    fail_level: str = "error"

    @property
    def failed(self) -> bool:
        threshold = SEVERITY_RANK[self.fail_level]
        return any(SEVERITY_RANK[d.severity] >= threshold for d in self.diagnostics)


@dataclass(frozen=True)
class LintReport:
    """The findings for every file linted."""

    files: tuple[FileReport, ...]

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return tuple(d for report in self.files for d in report.diagnostics)

    @property
    def suppressed(self) -> tuple[Suppressed, ...]:
        return tuple(s for report in self.files for s in report.suppressed)

    @property
    def failed(self) -> bool:
        return any(report.failed for report in self.files)

    def counts(self) -> dict[str, int]:
        counts = {"error": 0, "warning": 0, "info": 0}
        for diagnostic in self.diagnostics:
            counts[diagnostic.severity] += 1
        return counts


def _findings(
    compiled: CompiledPolicy | None, loaded: LoadedYaml, found: list[Diagnostic]
) -> list[Diagnostic]:
    extra: list[Diagnostic] = []
    if compiled is not None:
        extra += table_diagnostics(compiled)
        extra += lint_settings(loaded, compiled.policy.lint_severity)
    if loaded.data is not None:
        extra += boolean_words(loaded, found)
        extra += unquoted_version(loaded)
        extra += deprecated_settings(loaded) + invisible_text(loaded)
    return found + extra


def _unchecked(compiled: CompiledPolicy | None, loaded: LoadedYaml) -> frozenset[str]:
    """The codes `_findings` could not look for: those of the table and of the `lint:` section
    when the policy does not load, those of the YAML source when it is not even YAML."""
    codes: set[str] = set()
    if compiled is None:
        codes |= {c for c, entry in LINT_CODES.items() if entry.category == "table"}
        codes.add("bad-lint-config")
    if loaded.data is None:
        codes |= {"yaml-boolean-word", "unquoted-version"}
    return frozenset(codes)


def _levels(compiled: CompiledPolicy | None, options: LintOptions) -> dict[str, str]:
    configured = dict(options.project_severity)
    configured.update(compiled.policy.lint_severity if compiled is not None else {})
    configured.update(options.severity)
    return {code: level for code, level in configured.items() if not lint_code(code).fixed}


def _with_level(diagnostics: Sequence[Diagnostic], levels: Mapping[str, str]) -> list[Diagnostic]:
    kept = []
    for diagnostic in diagnostics:
        level = levels.get(diagnostic.code, lint_code(diagnostic.code).severity)
        if level == "ignore":
            continue
        severity: Severity = (
            "error" if level == "error" else "warning" if level == "warning" else "info"
        )
        kept.append(replace(diagnostic, severity=severity))
    return kept


def _sort_key(diagnostic: Diagnostic) -> tuple[int, int, str, str]:
    location = diagnostic.location
    return (location.line, location.column, diagnostic.code, diagnostic.message)


def lint_text(text: str, file: str = "<policy>", options: LintOptions | None = None) -> FileReport:
    """Lint one policy given as text. Never raises for a bad policy."""
    return lint_and_compile(text, file, options)[0]


def lint_and_compile(
    text: str, file: str = "<policy>", options: LintOptions | None = None
) -> tuple[FileReport, CompiledPolicy | None]:
    """`lint_text`, and the compiled policy when it loads as the gate would load it (None
    when it has a load error), from the same compile (the playground's table)."""
    options = options or LintOptions()
    compiled, found = analyze_policy_text(text, file)
    report = _report(text, file, options, compiled, found)
    if compiled is None or any(d.severity == "error" for d in found):
        return report, None
    return report, CompiledPolicy(compiled.policy, compiled.table, compiled.matches, tuple(found))


def _report(
    text: str,
    file: str,
    options: LintOptions,
    compiled: CompiledPolicy | None,
    found: Sequence[Diagnostic],
) -> FileReport:
    loaded = compiled.policy.source if compiled is not None else load_yaml(text, file)
    diagnostics = _findings(compiled, loaded, list(found))
    ignores, problems = parse_ignores(text, file)
    rule_lines = {rule.id: rule.location.line for rule in compiled.policy.rules} if compiled else {}
    kept, suppressed, unused = apply_ignores(
        diagnostics, ignores, rule_lines, _unchecked(compiled, loaded)
    )
    levels = _levels(compiled, options)
    final = _with_level(kept + problems + unused, levels)
    fail_level = options.fail_level or _policy_fail_level(loaded.data)
    fail_level = fail_level or options.project_fail_level or "error"
    return FileReport(file, tuple(sorted(final, key=_sort_key)), tuple(suppressed), fail_level)


def _policy_fail_level(document: Any) -> str | None:
    """The `lint.fail_level` the policy file sets itself, if it sets a valid one."""
    lint = document.get("lint") if isinstance(document, dict) else None
    level = lint.get("fail_level") if isinstance(lint, dict) else None
    return level if level in ("error", "warning", "info") else None


def lint_file(path: str | Path, options: LintOptions | None = None) -> FileReport:
    """Lint one policy file; an unreadable file is itself a finding."""
    shown = display_path(path)
    try:
        text = read_source_file(path, kind="policy")  # bounded: never a huge file read whole
    except PolicyError as error:
        found = tuple(
            replace(d, location=Location(shown, d.location.line, d.location.column))
            for d in error.diagnostics
        )
        return FileReport(shown, found, fail_level=(options or LintOptions()).fail_level or "error")
    return lint_text(text, shown, options)


def lint_config(path: str | Path, options: LintOptions | None = None) -> FileReport:
    """Lint an agent config: what the gate would fail closed on (errors) and near misses of
    the keys it reads (warnings). Never raises for a bad file."""
    shown = display_path(path)
    try:
        text = read_regular_file(path, DEFAULT_LIMITS.max_bytes).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not UTF-8 text"
        found = (
            Diagnostic(
                "unreadable-file", "error", f"cannot read `{shown}`: {reason}", Location(shown)
            ),
        )
        fail_level = (options or LintOptions()).fail_level or "error"
        return FileReport(shown, found, (), fail_level)
    return lint_config_text(text, shown, options, check_files=True)


def lint_config_text(
    text: str,
    file: str = "<config>",
    options: LintOptions | None = None,
    *,
    check_files: bool = False,
) -> FileReport:
    """`lint_config` of an agent config given as text (the playground's second tab). With
    `check_files`, the files it names are looked at as the gate will (a `routes_file` that is
    a directory or a FIFO is an error here, not only when a command loads the gate)."""
    from ...facts._routes import check_routes_file
    from ...facts.config._config import AgentConfig

    try:
        config = AgentConfig.from_text(text, file)
    except PolicyError as error:
        found = tuple(error.diagnostics)
    else:
        found = tuple(config.diagnostics)
        if check_files and config.routes_file:
            try:
                check_routes_file(config.routes_file, config.routes_file_location)
            except PolicyError as error:
                found = (*found, *error.diagnostics)
    fail_level = (options or LintOptions()).fail_level or "error"
    return FileReport(file, tuple(sorted(found, key=_sort_key)), (), fail_level)


def lint_files(files: Sequence[str | Path], options: LintOptions | None = None) -> LintReport:
    """Lint the files given, each as a policy."""
    return LintReport(tuple(lint_file(path, options) for path in files))


def lint_paths(
    paths: Sequence[str | Path],
    options: LintOptions | None = None,
    policies_only: bool = False,
    project: Project | None = None,
) -> LintReport:
    """Lint files and directories (no paths: the project's policy files, as configured).

    Directories are searched for files that read like policies (`_discover`); a named file
    is always linted, except with `policies_only` (for hooks that pass every changed YAML
    file), which skips named files that are not policy documents or that `exclude` names.
    """
    found = find_policies(project or find_project(), paths, policies_only=policies_only)
    return lint_files(found.files, options)
