"""A misspelt option, said before argparse reads the line.

argparse reports missing required flags before it looks at words it did not recognise, and a
catch-all server command (`mcp call ... -- SERVER`, `proxy ... -- SERVER`) takes every word
from the first one it does not know: `mcp call --tol x -- server` said "the following
arguments are required: --tool". The scan here walks the (sub)commands as argparse would and
stops where the server command starts (`--`, or the first plain word of a command that takes
one), so a server's own flags are never judged.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence

__all__ = ["misspelt_option", "unknown_option_message"]

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def misspelt_option(parser: argparse.ArgumentParser, arguments: Sequence[str]) -> str | None:
    """The one-line error for the first option no (sub)command defines, or None."""
    target, names = parser, list[str]()
    words = list(arguments)
    while words:
        word = words.pop(0)
        if word == "--":
            return None
        if word.startswith("-") and word != "-" and not _NEGATIVE_NUMBER.match(word):
            action = _option(target, word)
            if action is None:
                return unknown_option_message(target, names, word)
            if action.nargs != 0 and "=" not in word and words:
                words.pop(0)  # its value, whatever it looks like
            continue
        sub = _subcommands(target)
        if sub is not None and word in sub.choices:
            target, names = sub.choices[word], [*names, word]
        elif _takes_the_rest(target):
            return None  # the server command: its flags are its own
    return None


def unknown_option_message(target: argparse.ArgumentParser, names: Sequence[str], word: str) -> str:
    """`visiongate mcp call: error: unknown option `--tol`: did you mean `--tool`?`"""
    label = " ".join(["visiongate", *names])
    flag = word.split("=", 1)[0]
    options = [option for action in target._actions for option in action.option_strings]
    close = difflib.get_close_matches(flag, options, n=1, cutoff=0.6)
    hint = f"did you mean `{close[0]}`?" if close else f"see `{label} --help`"
    return f"{label}: error: unknown option `{flag}`: {hint}"


def _option(target: argparse.ArgumentParser, word: str) -> argparse.Action | None:
    flag = word.split("=", 1)[0]
    found = target._option_string_actions.get(flag)
    if found is None and not word.startswith("--") and len(word) > 2:
        found = target._option_string_actions.get(word[:2])  # `-oFILE`
    return found


def _subcommands(target: argparse.ArgumentParser) -> argparse._SubParsersAction | None:  # type: ignore[type-arg]
    return next((a for a in target._actions if isinstance(a, argparse._SubParsersAction)), None)


def _takes_the_rest(target: argparse.ArgumentParser) -> bool:
    return any(
        action.nargs == argparse.REMAINDER
        for action in target._actions
        if not action.option_strings
    )
