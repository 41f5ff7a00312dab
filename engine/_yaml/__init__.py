"""A YAML loader that keeps `line:col` for every node and refuses the format's traps.

PyYAML silently keeps the last of two duplicate keys and reads `yes`/`no`/`on`/`off` as
booleans (YAML 1.1). Policy files are edited by hand, so both are reported instead: a
duplicate key is an error naming both places, and every plain scalar that resolved to a
boolean is remembered so the schema stage can say "quote it" where a string was expected.

Policy files also arrive in pull requests, so the loader must hold against hostile input.
It reads libyaml's event stream (C, linear in the file size, never recursive) and builds the
data itself with an explicit stack under hard bounds (`YamlLimits`): a recursive alias, a
file nested thousands deep or a "billion laughs" is refused with a located diagnostic before
any recursive walk or alias expansion happens. Only the YAML core types are read: explicit
tags other than `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq` and `!!map` are
refused, and timestamps stay the text as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from visiongate.kernel._files import read_regular_file

from .._diagnostics import Diagnostic, Location, PolicyError
from ._loaded import LoadedYaml, file_too_large
from ._scalars import DEFAULT_LIMITS, DocumentPath, YamlLimits, shown

__all__ = [
    "DEFAULT_LIMITS",
    "DocumentPath",
    "LoadedYaml",
    "YamlLimits",
    "load_yaml",
    "read_source_file",
    "shown",
]


_UNCAPPED: Final = 1 << 40
"""The cap of a caller that asked for none: still a regular file only."""
NOT_UTF8: Final = "not UTF-8 text"
"""How an unreadable file's diagnostic ends when the file is there but is not text: a file
that fails to load (exit 3), where a missing one is a usage error (exit 2)."""


def read_source_file(
    path: str | Path, max_bytes: int | None = DEFAULT_LIMITS.max_bytes, *, kind: str = "file"
) -> str:
    """The text of a policy, registry, catalog or config file (`kind` names which, e.g.
    `agent config`); `PolicyError` at the file's own location if unreadable.

    At most `max_bytes` are read: a larger file is refused without reading it whole; a FIFO or
    a device at the path is refused unread (`kernel._files`)."""
    try:
        cap = _UNCAPPED if max_bytes is None else max_bytes + 1
        data = read_regular_file(path, cap, whole=False)
        if max_bytes is not None and len(data) > max_bytes:
            raise PolicyError([file_too_large(str(path), f"more than {max_bytes:,}", max_bytes)])
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or NOT_UTF8
        raise PolicyError(
            [
                Diagnostic(
                    "unreadable-file",
                    "error",
                    f"cannot read the {kind} `{path}`: {reason[:1].lower()}{reason[1:]}",
                    Location(str(path)),
                    help="check the path, and that the file is readable UTF-8 text",
                )
            ]
        ) from error


def load_yaml(text: str, file: str = "<policy>", limits: YamlLimits = DEFAULT_LIMITS) -> LoadedYaml:
    """Parse one YAML document. Never raises for bad input: problems become diagnostics."""
    # PyYAML and the builder are imported on the first parse (~30 ms): a policy recalled from
    # the compile cache, and every command that reads no YAML, never pay for them.
    from ._parse import parse_yaml

    return parse_yaml(text, file, limits)
