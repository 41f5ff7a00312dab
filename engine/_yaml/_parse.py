"""Parsing one YAML document: libyaml's event stream, built by `_build` under its bounds."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Final

import yaml

from .._diagnostics import Diagnostic, Location
from ._build import Builder
from ._loaded import LoadedYaml, file_too_large
from ._scalars import DEFAULT_LIMITS, LoadAbort, YamlLimits, shown

# libyaml keeps marks and runs in C; the pure-Python parser (the same state machine, about
# 30 times slower) is the fallback where PyYAML was built without it.
_LOADER: Final[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(
    text: str, file: str = "<policy>", limits: YamlLimits = DEFAULT_LIMITS
) -> LoadedYaml:
    """Parse one YAML document. Never raises for bad input: problems become diagnostics."""
    size = _size_in_bytes(text, limits.max_bytes)
    if size > limits.max_bytes:
        too_large = file_too_large(file, f"{size:,}", limits.max_bytes)
        return LoadedYaml(None, file, text, diagnostics=(too_large,))
    builder = Builder(file, limits)
    events = _events(text)
    try:
        found = builder.run(events)
    except LoadAbort as abort:
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, abort.diagnostic))
    except yaml.MarkedYAMLError as error:
        diagnostic = _syntax_error(error, file)
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, diagnostic))
    except yaml.YAMLError as error:
        reason = getattr(error, "reason", None) or "the file is not valid YAML"
        diagnostic = _character_error(reason, getattr(error, "position", None), text, file)
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, diagnostic))
    except UnicodeEncodeError as error:
        # Only text given directly can hold a lone surrogate: files are decoded as UTF-8.
        diagnostic = _character_error(
            "a lone surrogate is not a character", error.start, text, file
        )
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, diagnostic))
    finally:
        events.close()
    if not found:
        empty = Diagnostic(
            "empty-document",
            "error",
            "the file is empty",
            Location(file, 1, 1),
            help="start from `policies/default.yaml`",
        )
        return LoadedYaml(None, file, text, diagnostics=(empty,))
    locations, key_locations, boolean_words = builder.tables()
    return LoadedYaml(
        builder.root,
        file,
        text,
        locations,
        key_locations,
        boolean_words,
        tuple(builder.diagnostics),
    )


def _events(text: str) -> Generator[yaml.Event, None, None]:
    parser = _LOADER(text)
    try:
        while parser.check_event():
            yield parser.get_event()
    finally:
        parser.dispose()


def _size_in_bytes(text: str, limit: int) -> int:
    # A UTF-8 character takes at most 4 bytes: encode only when the answer is in doubt.
    return len(text) if len(text) * 4 <= limit else len(text.encode("utf-8", "surrogatepass"))


def _syntax_error(error: yaml.MarkedYAMLError, file: str) -> Diagnostic:
    mark = error.problem_mark or error.context_mark
    location = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file, 1, 1)
    problem = error.problem or error.context or "the file is not valid YAML"
    context = f" ({error.context})" if error.context and error.problem else ""
    return Diagnostic(
        "yaml-syntax",
        "error",
        f"{problem}{context}",
        location,
        help="check indentation and quoting near this position",
    )


def _character_error(reason: str, position: object, text: str, file: str) -> Diagnostic:
    """A character libyaml refuses (a control character), located from its position."""
    location = Location(file, 1, 1)
    if isinstance(position, int) and 0 <= position <= len(text):
        line_start = text.rfind("\n", 0, position) + 1
        location = Location(file, text.count("\n", 0, position) + 1, position - line_start + 1)
    return Diagnostic(
        "yaml-syntax",
        "error",
        shown(reason, 120),
        location,
        help="remove control characters; write them as escapes in a double-quoted string",
    )
