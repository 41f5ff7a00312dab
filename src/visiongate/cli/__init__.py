"""The `visiongate` command: a thin dispatcher; each command is its own small module.

A command module has `configure(parser)` and `run(args) -> int`. Its one-line help lives in
`COMMANDS` here, so `visiongate --help` imports no command module, and `visiongate CMD`
imports only the module of CMD (which imports what it needs inside `run`): pre-commit hooks
and CI start the command once per call, and every import is paid on every call.

Every command follows one table of exit codes (`EXIT_CODES`), writes usage errors to standard
error, and ends quietly when the reader of its output goes away (`| head -1`): see `_stdout`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

# Not `typing.TYPE_CHECKING`: `typing` costs every command's `--help` a few ms (issue 37).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Protocol

    class CommandModule(Protocol):
        def configure(self, parser: argparse.ArgumentParser) -> None: ...

        def run(self, args: argparse.Namespace) -> int: ...


# name -> (module, one-line help); the order is the order of `visiongate --help`.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "visiongate.cli.demo",
        "run the whole mission end to end, offline: real MCP server, gate, images, OCR, payloads",
    ),
    "decide": (
        "visiongate.cli.decide",
        "decide the lane for a provider and model (or for facts given directly)",
    ),
    "explain": (
        "visiongate.cli.policy.explain",
        "print the whole decision table of a policy (every cell, its lane and rule)",
    ),
    "lint": (
        "visiongate.cli.policy.lint",
        "check policy files: load errors plus exact gap/overlap/shadowing/... checks",
    ),
    "fmt": (
        "visiongate.cli.policy.fmt",
        "format policy and policy test files in one canonical layout, keeping comments",
    ),
    "test": (
        "visiongate.cli.policy.test",
        "run policy test files (*.test.yaml) and report rule and cell coverage",
    ),
    "docs": (
        "visiongate.cli.policy.docs",
        "generate one Markdown page per policy (--check: fail if a page is missing or stale)",
    ),
    "diff": (
        "visiongate.cli.policy.diff",
        "compare two policy versions cell by cell (exit 1 when any lane changes)",
    ),
    "rule": (
        "visiongate.cli.policy.rule",
        "show the documentation page of a lint code (no code: list every code)",
    ),
    "audit": (
        "visiongate.cli.audit",
        "summarize decision traces for auditors, or explain one decision (--decision ID)",
    ),
    "route": (
        "visiongate.cli.route",
        "route a tool result given as files and print the provider payload and decision record",
    ),
    "mcp": ("visiongate.cli.mcp", "call a tool on an MCP server over stdio and route its result"),
    "proxy": (
        "visiongate.cli.proxy",
        "put the gate in front of any MCP client: an MCP server that relays to the real one",
    ),
    "registry": (
        "visiongate.cli.registry",
        "show a provider's route verdicts with their evidence, or the route of one model",
    ),
    "catalog": (
        "visiongate.cli.catalog",
        "refresh the model catalog from models.dev (update), or see what it knows (show)",
    ),
    "routes": (
        "visiongate.cli.routes",
        "list or forget routes learned at run time (report_refusal) or settled by `probe --save`",
    ),
    "probe": (
        "visiongate.cli.probe",
        "send one real tool call with an image of a code and see whether the model reads it",
    ),
    "playground": (
        "visiongate.cli.playground",
        "edit a policy in a local web page: lint, the 54 cells, diff, tests and routes, live",
    ),
    "version": (
        "visiongate.cli.version",
        "print the package, policy language and JSON schema versions",
    ),
}

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INVALID_POLICY = 3
EXIT_TOOL_ERROR = 4

EXIT_CODES = """\
exit codes (every command):
  0  ok
  1  findings: lint or test failures, lane changes (diff), audit findings, an inconclusive
     probe, files fmt --check would change, missing or stale pages (docs --check)
  2  usage or input error: a bad flag, a missing or unreadable input file, an output that
     cannot be written, no policy or test file found, a name a look-up does not find
  3  a policy or configuration that fails to load (lint reports a policy's load errors as
     findings, 1; `lint --config` exits 3 on an agent config the gate fails closed on)
  4  `mcp call`: the tool answered with an error (`isError`); its routed result is printed"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, handed the width it would work out itself: argparse makes one at
    every `add_argument` (to check a metavar), and its own look-up imports `shutil` (with
    `zlib`, `bz2` and `lzma`), ~2 ms of every command that takes options (issue 37)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _terminal_columns() - 2 if width is None else width  # argparse's own margin
        super().__init__(prog, indent_increment, max_help_position, width)


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`: `COLUMNS` when it is a positive number, else the
    width of the terminal of standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]  # None is caught
    except (AttributeError, ValueError, OSError):  # no standard output, or not a terminal
        return 80


def _load(name: str) -> CommandModule:
    # `typing.cast` would import `typing` for every command (issue 37).
    module: Any = importlib.import_module(COMMANDS[name][0])
    return module  # type: ignore[no-any-return]  # every module of COMMANDS is one


def build_parser(only: str | None = None, *, alone: bool = False) -> argparse.ArgumentParser:
    """The argument parser; only the module of `only` (if any) is imported. With `alone` it
    knows no other command: a command line that starts with `only` never shows the top-level
    help that lists them, and each one costs a start-up an `ArgumentParser` (issue 37)."""
    parser = argparse.ArgumentParser(
        prog="visiongate",
        allow_abbrev=False,
        description="Route tool-produced images to the model as pixels or as text, by policy.",
        epilog=EXIT_CODES,
        formatter_class=_Formatter,
    )
    parser.add_argument(
        "--version", action="store_true", help="print the versions and exit (as `version`)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, summary) in COMMANDS.items():
        if name != only:
            if not alone:
                commands.add_parser(name, help=summary, add_help=False, allow_abbrev=False)
            continue
        sub = commands.add_parser(
            name,
            allow_abbrev=False,
            help=summary,
            description=summary,
            epilog=EXIT_CODES,
            formatter_class=_Formatter,
        )
        module = _load(name)
        module.configure(sub)
        sub.set_defaults(handler=module.run)
    return parser


def _unknown_command(arguments: list[str]) -> str | None:
    """The first word when it is not a command (argparse would list all of them)."""
    first = next((a for a in arguments if not a.startswith("-")), None)
    if first is None or first in COMMANDS:
        return None
    from visiongate.kernel._suggest import closest

    close = closest(first, COMMANDS)
    hint = f"did you mean `{close}`?" if close else "see `visiongate --help`"
    return f"visiongate: error: unknown command `{first}`: {hint}"


def _unrecognized(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]
) -> str:
    """One line for the first word no parser took, with a did-you-mean among the options of
    the (sub)command it was given to: `lint --stirct` -> did you mean `--strict`?"""
    target, names = parser, list[str]()
    while True:
        sub = next((a for a in target._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, sub.dest, None) if sub is not None else None
        if sub is None or name not in sub.choices:
            break
        target, names = sub.choices[name], [*names, name]
    word = extras[0]
    label = " ".join(["visiongate", *names])
    if not word.startswith("-") or word == "-":
        return f"{label}: error: unexpected argument `{word}`: see `{label} --help`"
    return _unknown_option(target, names, word)


def _unknown_option(target: argparse.ArgumentParser, names: Sequence[str], word: str) -> str:
    """`visiongate mcp call: error: unknown option `--tol`: did you mean `--tool`?`"""
    from visiongate.kernel._suggest import closest

    label = " ".join(["visiongate", *names])
    flag = word.split("=", 1)[0]
    options = [option for action in target._actions for option in action.option_strings]
    close = closest(flag, options)
    hint = f"did you mean `{close}`?" if close else f"see `{label} --help`"
    return f"{label}: error: unknown option `{flag}`: {hint}"


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _misspelt_option(parser: argparse.ArgumentParser, arguments: Sequence[str]) -> str | None:
    """The error for the first option no (sub)command defines, found before argparse reads the
    line: argparse names missing required flags first, and a server command (`mcp call ...
    -- SERVER`) takes every word from the first it does not know, so `mcp call --tol x --
    server` said "the following arguments are required: --tool". The scan walks the
    (sub)commands as argparse does and stops where the server command starts (`--`, or the
    first plain word of a command that takes one): a server's own flags are never judged."""
    target, names = parser, list[str]()
    words = list(arguments)
    while words:
        word = words.pop(0)
        if word == "--":
            return None
        if word.startswith("-") and word != "-" and not _NEGATIVE_NUMBER.match(word):
            action = target._option_string_actions.get(word.split("=", 1)[0])
            if action is None and not word.startswith("--") and len(word) > 2:
                action = target._option_string_actions.get(word[:2])  # `-oFILE`
            if action is None:
                return _unknown_option(target, names, word)
            value = word.split("=", 1)[1] if "=" in word else None
            if action.nargs != 0 and value is None and words:
                value = words.pop(0)  # its value, whatever it looks like
            problem = _bad_choice(action, names, value)
            if problem is not None:
                return problem
            continue
        sub = next((a for a in target._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is not None and word in sub.choices:
            target, names = sub.choices[word], [*names, word]
        elif sub is not None and names:
            return _unknown_action(sub, names, word)
        elif any(a.nargs == argparse.REMAINDER for a in target._actions if not a.option_strings):
            return None  # the server command: its flags are its own
    return None


def _unknown_action(sub: argparse._SubParsersAction, names: Sequence[str], word: str) -> str:  # type: ignore[type-arg]  # argparse's own generic
    """`visiongate catalog: error: unknown action `shwo`: did you mean `show`?`"""
    from visiongate.kernel._display import visible
    from visiongate.kernel._suggest import did_you_mean

    label = " ".join(["visiongate", *names])
    hint = did_you_mean(word, list(sub.choices))
    return f"{label}: error: unknown action `{visible(word)}`: {hint}"


def _bad_choice(action: argparse.Action, names: Sequence[str], value: str | None) -> str | None:
    """`visiongate lint: error: `--format jsn` is not a format: did you mean `json`?`, for an
    option with a fixed set of values (argparse would print its whole usage)."""
    if value is None or action.choices is None or value in action.choices:
        return None
    from visiongate.kernel._display import visible
    from visiongate.kernel._suggest import did_you_mean

    label = " ".join(["visiongate", *names])
    flag = action.option_strings[-1]
    hint = did_you_mean(value, [str(choice) for choice in action.choices])
    return f"{label}: error: `{flag}` does not take `{visible(value)}`: {hint}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (see `EXIT_CODES`)."""
    from visiongate.cli._stdout import guarded_stdout

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] in (["proxy"], ["mcp"]) and argv is None:
        from visiongate.cli._signals import defer_signals

        defer_signals()  # they start servers: a Ctrl-C while loading must not be lost
    with guarded_stdout() as outcome:
        try:
            outcome.code = _dispatch(arguments)
        except KeyboardInterrupt:  # Ctrl-C before a command installed its own handling
            print("visiongate: stopped by SIGINT", file=sys.stderr)
            outcome.code = 130
        except ImportError as error:
            # `mcp call` and `demo` need the MCP SDK (the `mcp` extra): say so in one line.
            message = _missing_sdk(error)
            if message is None:
                raise
            print(f"visiongate: {message}", file=sys.stderr)
            outcome.code = EXIT_USAGE
    return outcome.code


def _missing_sdk(error: ImportError) -> str | None:
    from visiongate.adapters.mcp._sdk import missing_sdk_message

    return missing_sdk_message(error)


def _dispatch(arguments: list[str]) -> int:
    problem = _unknown_command(arguments)
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    first = next((a for a in arguments if not a.startswith("-")), None)
    parser = build_parser(only=first, alone=arguments[:1] == [first])
    problem = _misspelt_option(parser, arguments)  # before argparse's "required" complaint
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    try:
        args, extras = parser.parse_known_args(arguments)
    except SystemExit as done:  # argparse: --help (0) or a usage error (2), already printed
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    if extras:
        print(_unrecognized(parser, args, extras), file=sys.stderr)
        return EXIT_USAGE
    if args.version:
        return _load("version").run(argparse.Namespace(json=False))
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from visiongate.cli._common import run_command

    return run_command(handler, args)


if __name__ == "__main__":
    raise SystemExit(main())
