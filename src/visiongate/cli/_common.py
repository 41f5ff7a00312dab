"""What every command shares: exit codes, error lines, input files, outputs, JSON.

Conventions (see `visiongate.cli.EXIT_CODES`): a usage or input error is one line on standard
error, Cedar style (`visiongate CMD: error: cannot read the agent config `x`: no such file or
directory`), and exit 2; a policy or configuration that fails to load is its diagnostics on
standard error and exit 3; with `--json`, standard output is exactly one JSON document.
Nothing here imports the engine at module level: `--help` must stay quick.

A command adopts the conventions by raising `UsageError` for bad usage or input (one line on
stderr, exit 2) or `CommandExit(code)` to end with another code once it has said why, running
what may raise a policy or input error through `checked(...)`, checking input files with
`check_input_file`, writing outputs with `write_output` or `output_directory`, and printing
`--json` documents with `print_json`. A reader that goes away, a closed standard output and a
full disk are handled for every command by `visiongate.cli.main`.
"""

from __future__ import annotations

import argparse
import os
import sys

from visiongate.cli import EXIT_INVALID_POLICY, EXIT_USAGE
from visiongate.kernel._errors import VisiongateError

# Not `typing.TYPE_CHECKING`, and `pathlib` imported where a path is used: `typing` and
# `pathlib` (with `urllib`) cost every command's `--help` several milliseconds (issue 37).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, TypeVar

    from visiongate.engine import Gate, PolicyError

    T = TypeVar("T")


class CommandExit(VisiongateError):
    """End the command with `code`; `message`, when there is one, is its error line (what
    else it had to say is already printed)."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message or f"exit {code}")
        self.code = code
        self.message = message


class UsageError(CommandExit):
    """Bad usage or input: reported as one line, exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(EXIT_USAGE, message)


def run_command(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command's `run`; a `CommandExit` becomes its error line and its code."""
    try:
        return int(handler(args))
    except CommandExit as done:
        if done.message:
            fail(command_label(args), done.message)
        return done.code


def command_label(args: argparse.Namespace) -> str:
    """The command as typed: `mcp call`, `registry show`, `lint`."""
    action = getattr(args, "mcp_command", None) or getattr(args, "action", None)
    return f"{args.command} {action}" if isinstance(action, str) else str(args.command)


def fail(command: str, message: str) -> None:
    """Print one error line on standard error."""
    print(f"visiongate {command}: error: {message}", file=sys.stderr)


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", help="policy file or bundled name (default: `default`)")
    parser.add_argument("--config", help="agent config YAML (agent.image_input_mode, ...)")
    parser.add_argument("--catalog", help="model catalog in models.dev api.json shape")
    parser.add_argument("--registry", help="provider registry YAML (default: bundled)")


def policy_exit_code(error: PolicyError) -> int:
    """3 for a policy or config that fails to load; 2 when the only problem is a file that
    cannot be read at all (a missing input is a usage error, not an invalid policy)."""
    from visiongate.engine._yaml import NOT_UTF8

    errors = [d for d in error.diagnostics if d.severity == "error"]
    # A file that is there but is not UTF-8 text fails to load, as `lint` says (issue 26).
    unreadable = errors and all(
        d.code == "unreadable-file" and not d.message.endswith(NOT_UTF8) for d in errors
    )
    return EXIT_USAGE if unreadable else EXIT_INVALID_POLICY


def checked(action: Callable[[], T]) -> T:
    """`action()`; a policy that fails to load is printed and ends the command (exit 3, or 2
    for an unreadable file), a bad input (`ValueError`, `OSError`) is a `UsageError`."""
    from visiongate.engine import PolicyError

    try:
        return action()
    except PolicyError as error:
        print(error.render(), file=sys.stderr)
        raise CommandExit(policy_exit_code(error)) from None
    except (ValueError, OSError) as error:
        raise UsageError(str(error)) from None


def reason(error: OSError | UnicodeDecodeError) -> str:
    """Why a file operation failed, in lower case (`no such file or directory`)."""
    text = getattr(error, "strerror", None) or (
        "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else str(error)
    )
    return text[:1].lower() + text[1:]


def check_input_file(path: str | None, kind: str) -> None:
    """Raise `UsageError` naming the file and its kind when `path` cannot be read."""
    if path is None:
        return
    from pathlib import Path

    from visiongate.kernel._files import check_regular

    candidate = Path(path)
    if candidate.is_dir():
        raise UsageError(f"cannot read the {kind} `{path}`: it is a directory")
    try:
        # Looked at, then opened without blocking: opening a FIFO waits for a writer for ever.
        check_regular(os.stat(candidate), candidate)
        os.close(os.open(candidate, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except OSError as error:
        raise UsageError(f"cannot read the {kind} `{path}`: {reason(error)}") from None


def check_gate_inputs(args: argparse.Namespace) -> None:
    """The files behind `--config`, `--catalog` and `--registry`, and the `--policy` name."""
    check_input_file(getattr(args, "config", None), "agent config")
    check_input_file(getattr(args, "catalog", None), "model catalog")
    check_input_file(getattr(args, "registry", None), "provider registry")
    if getattr(args, "policy", None) is not None:
        args.policy = policy_reference(args.policy)


def policy_reference(spec: str) -> str:
    """A policy file or a bundled policy name, else `UsageError` with a did-you-mean."""
    from visiongate.engine.tooling._sources import SourceError, check_policy_reference

    try:
        return check_policy_reference(spec)
    except SourceError as error:
        raise UsageError(str(error)) from None


def write_output(path: str | Path, text: str) -> None:
    """Write an output file; a directory, a missing folder or no permission is a `UsageError`."""
    from pathlib import Path

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"cannot write `{path}`: it is a directory")
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write `{path}`: {reason(error)}") from None


def output_directory(path: str | Path) -> Path:
    """A directory to write into, created if missing; a file in the way is a `UsageError`."""
    from pathlib import Path

    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"`{path}` is a file, not a directory")
    try:
        target.mkdir(parents=True, exist_ok=True)
        probe = target / ".visiongate-write-test"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise UsageError(f"cannot write in the directory `{path}`: {reason(error)}") from None
    return target


def print_json(document: Any) -> None:
    """One JSON document on standard output."""
    from visiongate.kernel._display import json_text

    print(json_text(document, indent=2))


def add_format_arguments(
    parser: argparse.ArgumentParser, formats: tuple[str, ...], help_text: str = "output format"
) -> None:
    """`--format` and, since one of the formats is JSON, `--json` as its short form."""
    parser.add_argument("--format", choices=formats, default="text", help=help_text)
    parser.add_argument("--json", action="store_true", help="same as --format json")


def chosen_format(args: argparse.Namespace) -> str:
    """The format asked for; `--json` with another `--format` is a `UsageError`."""
    if args.json and args.format not in ("text", "json"):
        raise UsageError(f"`--json` and `--format {args.format}` ask for two formats: give one")
    return "json" if args.json else str(args.format)


def positive_seconds(text: str) -> float:
    """An `argparse` type: a finite number of seconds above 0 (`--timeout`)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"`{text}` must be above 0 seconds")
    return value


def target_model(args: argparse.Namespace, gate: Gate) -> tuple[str, str]:
    """The provider and model to decide for: the command line's, else the agent config's main
    model (`model.provider`, `model.default`); a `UsageError` when neither names one."""
    config = gate.config
    provider = args.provider or config.main_provider
    model = args.model or config.main_model
    if not provider or not model:
        raise UsageError(
            f"the agent config `{args.config}` names no main model: give `--provider` and "
            "`--model`, or set `model.provider` and `model.default` there"
        )
    return provider, model
