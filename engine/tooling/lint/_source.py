"""Checks on the policy source and the linter's own settings (no decision table needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from visiongate.kernel._suggest import did_you_mean

from ..._diagnostics import Diagnostic
from ..._yaml import LoadedYaml
from ._codes import LINT_CODES, lint_code

# As `_policy_schema.LINT_LEVELS`; not imported from there, which would import cerberus.
LINT_LEVELS = ("error", "warning", "info", "ignore")


def boolean_words(loaded: LoadedYaml, reported: Sequence[Diagnostic]) -> list[Diagnostic]:
    """yes/no/on/off left where a boolean is allowed: valid, but a trap for the next editor."""
    already = {d.document_path for d in reported if d.code == "yaml-implicit-boolean"}
    found = []
    for path, word in sorted(loaded.boolean_words.items(), key=lambda item: str(item[0])):
        if any(reported[: len(path)] == path for reported in already):
            continue  # already an error where a word was expected
        value = "true" if word.lower() in ("y", "yes", "on") else "false"
        found.append(
            Diagnostic(
                "yaml-boolean-word",
                "warning",
                f"`{word}` is read by YAML as the boolean `{value}`",
                loaded.location(path),
                path,
                help=f"write `{value}` (`visiongate fmt` does): the same word quoted elsewhere "
                "would be a string",
            )
        )
    return found


def unquoted_version(loaded: LoadedYaml) -> list[Diagnostic]:
    """`version: 1.10` is the number 1.1: traces and docs would name the wrong version."""
    if not isinstance(loaded.data, dict) or "version" not in loaded.data:
        return []
    value = loaded.data["version"]
    if isinstance(value, str) or not isinstance(value, int | float) or isinstance(value, bool):
        return []
    return [
        Diagnostic(
            "unquoted-version",
            "warning",
            f"`version` is read as the number `{value}`, not as the text written",
            loaded.location(("version",)),
            ("version",),
            help='quote it, e.g. `version: "1.10"` (unquoted, YAML reads 1.10 as 1.1); '
            "`visiongate fmt` does",
        )
    ]


def lint_settings(loaded: LoadedYaml, severity: Mapping[str, str]) -> list[Diagnostic]:
    """`lint.severity` entries that cannot apply: unknown codes and load errors."""
    found = []
    for code, level in severity.items():
        path = ("lint", "severity", code)
        location = loaded.location(path, key=True)
        if code not in LINT_CODES:
            found.append(
                Diagnostic(
                    "bad-lint-config",
                    "warning",
                    f"unknown lint code `{code}`",
                    location,
                    path,
                    help=did_you_mean(code, list(LINT_CODES)),
                )
            )
        elif lint_code(code).fixed and level != "error":
            found.append(
                Diagnostic(
                    "bad-lint-config",
                    "warning",
                    f"`{code}` is a load error; its level cannot be changed",
                    location,
                    path,
                    help="the gate refuses a policy with this error whatever the linter says",
                )
            )
    return found


def parse_severity_option(text: str) -> tuple[str, str]:
    """`code=level` from the command line; raises ValueError with a helpful message."""
    code, _, level = text.partition("=")
    code, level = code.strip(), level.strip()
    if code not in LINT_CODES:
        raise ValueError(f"unknown lint code `{code}`: {did_you_mean(code, list(LINT_CODES))}")
    if level not in LINT_LEVELS:
        raise ValueError(f"unknown level `{level}`: {did_you_mean(level, list(LINT_LEVELS))}")
    if lint_code(code).fixed and level != "error":
        raise ValueError(f"`{code}` is a load error; its level cannot be changed")
    return code, level
