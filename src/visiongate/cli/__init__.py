"""The `visiongate` command: a thin dispatcher; each command is its own small module.

A command module has `HELP` (one line), `configure(parser)` and `run(args) -> int`.
Modules are imported only when their command runs, so `visiongate decide` stays quick.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Protocol, cast

# name -> module; the order is the order of `visiongate --help`.
COMMANDS: dict[str, str] = {
    "demo": "visiongate.cli.demo",
    "decide": "visiongate.cli.decide",
    "explain": "visiongate.cli.explain",
    "lint": "visiongate.cli.lint",
    "test": "visiongate.cli.test",
    "docs": "visiongate.cli.docs",
    "diff": "visiongate.cli.diff",
    "audit": "visiongate.cli.audit",
    "route": "visiongate.cli.route",
    "mcp": "visiongate.cli.mcp",
    "registry": "visiongate.cli.registry",
    "routes": "visiongate.cli.routes",
    "probe": "visiongate.cli.probe",
}

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INVALID_POLICY = 3


class CommandModule(Protocol):
    HELP: str

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _load(name: str) -> CommandModule:
    return cast(CommandModule, importlib.import_module(COMMANDS[name]))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `only`, just that command's module is imported."""
    parser = argparse.ArgumentParser(
        prog="visiongate",
        description="Route tool-produced images to the model as pixels or as text, by policy.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and name != only:
            commands.add_parser(name, add_help=False)
            continue
        try:
            module = _load(name)
        except ImportError as error:
            if only is not None or _missing_sdk(error) is None:
                raise
            # The full help still lists a command whose extra is not installed.
            commands.add_parser(name, help="(needs `pip install 'visiongate[mcp]'`)")
            continue
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        try:
            module.configure(sub)
        except ImportError as error:
            if only is not None or _missing_sdk(error) is None:
                raise
        sub.set_defaults(handler=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except ImportError as error:
        # `mcp call` and `demo` need the MCP SDK (the `mcp` extra): say so in one line.
        message = _missing_sdk(error)
        if message is None:
            raise
        print(f"visiongate: {message}", file=sys.stderr)
        return EXIT_USAGE


def _missing_sdk(error: ImportError) -> str | None:
    from visiongate.adapters.mcp._sdk import missing_sdk_message

    return missing_sdk_message(error)


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in arguments if not a.startswith("-")), None)
    parser = build_parser(only=first if first in COMMANDS else None)
    args = parser.parse_args(arguments)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    return int(handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
