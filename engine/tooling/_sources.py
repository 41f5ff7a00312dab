"""Where a policy comes from on the command line: a file, a bundled name or a git revision.

A name that is none of these is an error with a did-you-mean over the bundled names, so
`--policy defualt` and `diff default never-pixels` say what was meant (`default`,
`examples/never-pixels`) instead of failing to read a file nobody asked for.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._files import check_regular, read_regular_file
from visiongate.kernel._suggest import closest

from .._load import bundled_policy_names, bundled_policy_text, is_bundled_policy
from .._yaml import DEFAULT_LIMITS


class SourceError(VisiongateError, ValueError):
    """A policy source that cannot be read: no such file, no git, or no such revision."""


def suggest_bundled(spec: str) -> str:
    """`did you mean `x`?` over the bundled policy names (a bare example name counts too)."""
    names = bundled_policy_names()
    by_leaf = {name.rsplit("/", 1)[-1]: name for name in names}
    if spec in by_leaf:
        return f"did you mean `{by_leaf[spec]}`?"
    close = closest(spec, names)
    if close is None and (leaf := closest(spec, by_leaf)) is not None:
        close = by_leaf[leaf]
    if close is not None:
        return f"did you mean `{close}`?"
    return "bundled policies: " + ", ".join(f"`{name}`" for name in names)


def check_policy_reference(spec: str) -> str:
    """`spec` when it names a file or a bundled policy; else `SourceError` with a suggestion."""
    path = Path(spec)
    if path.is_file() or is_bundled_policy(spec):
        return spec
    if path.is_dir():
        raise SourceError(f"`{spec}` is a directory, not a policy file")
    if path.exists():  # a FIFO, a device: refused unread (reading one blocks or never ends)
        raise SourceError(f"cannot read the policy `{spec}`: {_not_regular(path)}")
    if spec.endswith((".yaml", ".yml")) or "/" in spec.replace("examples/", "", 1):
        raise SourceError(f"cannot read the policy `{spec}`: no such file")
    raise SourceError(
        f"`{spec}` is neither a policy file nor a bundled policy: {suggest_bundled(spec)}"
    )


def read_source(spec: str) -> tuple[str, str]:
    """(text, label) of a file, a `REV:PATH` git revision, or a bundled policy name."""
    path = Path(spec)
    if path.is_file():
        try:
            return read_regular_file(path, DEFAULT_LIMITS.max_bytes).decode("utf-8"), spec
        except (OSError, UnicodeDecodeError) as error:
            raise SourceError(
                f"cannot read `{spec}`: {getattr(error, 'strerror', None) or error}"
            ) from error
    if is_bundled_policy(spec):
        return bundled_policy_text(spec), f"policies/{spec}.yaml"
    if ":" in spec:
        return _git_show(spec), spec
    if path.is_dir():
        raise SourceError(f"`{spec}` is a directory, not a policy file")
    if path.exists():
        raise SourceError(f"cannot read `{spec}`: {_not_regular(path)}")
    if spec.endswith((".yaml", ".yml")):
        raise SourceError(f"cannot read `{spec}`: no such file")
    raise SourceError(
        f"`{spec}` is not a file, a bundled policy or a git revision (`REV:PATH`): "
        f"{suggest_bundled(spec)}"
    )


def _git_show(spec: str) -> str:
    try:
        done = subprocess.run(
            ["git", "show", spec], capture_output=True, text=True, encoding="utf-8", check=False
        )
    except FileNotFoundError as error:
        raise SourceError(
            f"`{spec}` looks like a git revision, but git is not installed"
        ) from error
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["unknown error"])[0]
        raise SourceError(f"git cannot show `{spec}`: {reason}")
    return done.stdout


def _not_regular(path: Path) -> str:
    try:
        check_regular(path.stat(), path)
    except OSError as error:
        return error.strerror or "not a regular file"
    return "not a regular file"
