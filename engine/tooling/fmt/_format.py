"""`visiongate fmt` as library calls: the canonical text of a policy or policy test file.

ruamel.yaml's round trip keeps comments, blank lines and quoting; `_tree` changes what the
layout fixes on the tree, ruamel writes it (two-space indentation, list items indented under
their key, no line wrapping), and `_layout` orders block mapping keys and aligns tables in
the text. The result is checked before anyone writes it: it must read back as the same
document the tree held, and formatting it again must change nothing.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from visiongate.kernel._display import one_line
from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._files import read_regular_file

from ..._diagnostics import Diagnostic
from ..._yaml import DEFAULT_LIMITS, load_yaml
from .._discover import looks_like_policy, looks_like_policy_test
from . import _layout, _tree

Kind = Literal["policy", "policy-test"]


class FormatError(VisiongateError, ValueError):
    """A file that cannot be formatted: not YAML, duplicate keys, not a mapping. When the
    YAML loader found why, `diagnostics` are its findings, as `lint` reports them."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.diagnostics = tuple(diagnostics)

    def render(self) -> str:
        """The loader's findings (`file:line:col: error[code]: ...`), else the message."""
        if not self.diagnostics:
            return f"error: {self}"
        return "\n".join(d.render() for d in self.diagnostics)


class NotPolicyError(FormatError):
    """A file that is neither a policy nor a policy test file."""


@dataclass(frozen=True)
class Formatted:
    """A file and its canonical text."""

    path: Path
    original: str
    text: str

    @property
    def changed(self) -> bool:
        return self.text != self.original


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 1 << 16  # never wrap a line: a reason stays one line, as written
    yaml.preserve_quotes = True
    return yaml


def kind_of(text: str) -> Kind | None:
    if looks_like_policy_test(text):
        return "policy-test"
    return "policy" if looks_like_policy(text) else None


def _load(text: str, label: str) -> Any:
    from ruamel.yaml.error import YAMLError

    try:
        return _yaml().load(text)
    except YAMLError as error:
        first = one_line(str(error), 300)
        raise FormatError(f"`{label}` is not valid YAML: {first}") from None


def _dump(document: Any, explicit_start: bool) -> str:
    yaml = _yaml()
    yaml.explicit_start = explicit_start
    stream = io.StringIO()
    yaml.dump(document, stream)
    return stream.getvalue()


def _layout_text(text: str, kind: Kind) -> str:
    lines = text.split("\n")
    if kind == "policy":

        def inner(key: str, body: list[str]) -> list[str]:
            if key == "rules":
                return _layout.reorder_items(body, 2, _tree.RULE_ORDER)
            if key == "invariants":
                return _layout.reorder_items(body, 2, _tree.INVARIANT_ORDER)
            return body

        lines = _layout.reorder(lines, 0, _tree.POLICY_ORDER, inner)
    else:

        def inner(key: str, body: list[str]) -> list[str]:
            return _layout.reorder_items(body, 2, _tree.CASE_ORDER) if key == "cases" else body

        lines = _layout.reorder(lines, 0, _tree.TEST_ORDER, inner)
    lines = _layout.align_tables(lines)
    return "\n".join(lines).rstrip("\n") + "\n"


def _plain(node: Any) -> Any:
    """A tree as plain dicts and lists, for comparing what two texts mean."""
    if isinstance(node, dict):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(value) for value in node]
    return node


def format_text(text: str, label: str = "<policy>", kind: Kind | None = None) -> str:
    """The canonical text; raises `FormatError` for what cannot be formatted."""
    kind = kind or kind_of(text)
    if kind is None:
        raise NotPolicyError(f"`{label}` is not a policy or a policy test file")
    from ruamel.yaml.comments import CommentedMap

    # The loader `lint` uses reads the file first: it is bounded against hostile YAML, and
    # its findings carry a line, a column, a code and a hint, where ruamel's text does not.
    errors = [d for d in load_yaml(text, label).diagnostics if d.severity == "error"]
    if errors:
        raise FormatError(f"`{label}` is not valid YAML: {errors[0].message}", errors)
    document = _load(text, label)
    if not isinstance(document, CommentedMap):
        raise FormatError(f"`{label}` is not a mapping of keys to values")
    if kind == "policy":
        _tree.canonical_policy(document, text)
    else:
        _tree.canonical_test(document)
    explicit_start = text.lstrip().startswith("---")
    result = _layout_text(_dump(document, explicit_start), kind)
    if _plain(_load(result, label)) != _plain(document):
        raise FormatError(f"`{label}`: formatting would change what the file says; left as is")
    return result


def format_file(path: Path, shown: str, kind: Kind | None = None) -> Formatted:
    """Read and format one file; raises `FormatError` (and `OSError` when unreadable)."""
    try:
        original = read_regular_file(path, DEFAULT_LIMITS.max_bytes).decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(f"`{shown}` is not UTF-8 text") from None
    return Formatted(path, original, format_text(original, shown, kind))
