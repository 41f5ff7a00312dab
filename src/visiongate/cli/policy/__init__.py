"""Commands about policy files: `explain`, `lint`, `fmt`, `test`, `docs`, `diff`, `rule`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from visiongate.cli._common import UsageError

if TYPE_CHECKING:
    from visiongate.engine.tooling._project import Project

# The picture formats of `explain` and `diff`: a copy of
# `visiongate.engine.tooling.pictures.PICTURES` (a test keeps them equal), so that `--help`
# imports no engine.
PICTURES = ("html", "svg", "markdown")


def policy_files(
    project: Project, paths: Sequence[str], *, policies_only: bool = False
) -> list[Path]:
    """The policies named or found (`find_policies`); none found is a `UsageError` unless
    `policies_only` (a pre-commit hook given no policy has nothing to do)."""
    from visiongate.engine.tooling._discover import MissingPathError, find_policies

    try:
        found = find_policies(project, paths, policies_only=policies_only)
    except MissingPathError as error:
        raise UsageError(str(error)) from None
    if not found.files and not policies_only:
        where = ", ".join(f"`{place}`" for place in found.searched)
        raise UsageError(
            f"no policy files found under {where}; check include/exclude ({project.label})"
        )
    return list(found.files)
