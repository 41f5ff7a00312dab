"""The text-level half of `visiongate fmt`, run on ruamel's regular output.

Reordering block mapping keys on ruamel's tree would misplace comments (ruamel keeps a
comment that precedes a key on the key before it), so keys are reordered here instead, as
blocks of lines: a key, the lines indented below it, and the comment lines above it. A
comment therefore moves with the key it introduces; the lines before the first key (the file
header) stay at the top.

Runs of one-line flow mappings in a list (a golden table of test cases) are aligned into
columns, as such tables are written by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ._tree import rank


@dataclass
class _Block:
    lead: list[str] = field(default_factory=list)
    """Comment and blank lines above the key."""
    body: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        first = self.body[0].strip()
        first = first[2:] if first.startswith("- ") else first
        return first.split(":", 1)[0].strip().strip("'\"")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_filler(line: str) -> bool:
    """A blank line or a line holding only a comment."""
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def split_blocks(lines: Sequence[str], indent: int) -> tuple[list[str], list[_Block], list[str]]:
    """(head, key blocks, tail) of a block mapping whose keys sit at column `indent`."""
    head: list[str] = []
    blocks: list[_Block] = []
    pending: list[str] = []
    for line in lines:
        if not _is_filler(line) and _indent(line) == indent and not line.lstrip().startswith("- "):
            if blocks:
                # Deeper-indented comments right after a block's content belong to that block.
                cut = max(
                    (i + 1 for i, p in enumerate(pending) if p.strip() and _indent(p) > indent),
                    default=0,
                )
                blocks[-1].body += pending[:cut]
                pending = pending[cut:]
            blocks.append(_Block(pending, [line]))
            pending = []
        elif _is_filler(line):
            pending.append(line)
        elif blocks:
            blocks[-1].body += [*pending, line]
            pending = []
        else:
            head += [*pending, line]
            pending = []
    return head, blocks, pending


def reorder(
    lines: Sequence[str],
    indent: int,
    order: Sequence[str],
    inner: Callable[[str, list[str]], list[str]] | None = None,
) -> list[str]:
    """The block mapping's keys in `order`; `inner(key, body)` rewrites a block's body."""
    head, blocks, tail = split_blocks(lines, indent)
    if not blocks:
        return list(lines)
    header, blocks[0].lead = blocks[0].lead, []
    if inner is not None:
        for block in blocks:
            block.body = inner(block.key, block.body)
    ordered = sorted(blocks, key=lambda block: rank(order, block.key))
    return [
        *head,
        *header,
        *(line for block in ordered for line in (*block.lead, *block.body)),
        *tail,
    ]


def reorder_items(body: list[str], indent: int, order: Sequence[str]) -> list[str]:
    """`key:` followed by a block list of mappings (at `indent`): each item's keys in `order`."""
    items: list[list[str]] = []
    head = body[:1]
    for line in body[1:]:
        if not _is_filler(line) and _indent(line) == indent and line.lstrip().startswith("- "):
            items.append([line])
        elif items:
            items[-1].append(line)
        else:
            head.append(line)
    return [*head, *(line for item in items for line in _reorder_item(item, indent, order))]


def _reorder_item(item: list[str], indent: int, order: Sequence[str]) -> list[str]:
    first = item[0]
    if first.rstrip().endswith("}") or len(item) == 1:
        return item  # a one-line flow mapping: its keys were ordered on the tree
    dash = " " * indent + "- "
    opened = [" " * (indent + 2) + first[len(dash) :], *item[1:]]
    result = reorder(opened, indent + 2, order)
    start = next(i for i, line in enumerate(result) if not _is_filler(line))
    moved, key_line = result[:start], result[start]
    return [*moved, dash + key_line[indent + 2 :], *result[start + 1 :]]


# -- aligned tables ------------------------------------------------------------------------------


def _segments(line: str) -> list[str] | None:
    """A `- {a: 1, b: {c: 2, d: 3}}` line cut after each comma of a flow mapping, or None."""
    stripped = line.lstrip(" ")
    if not stripped.startswith("- {"):
        return None
    pieces, start, stack, quote = [], 0, [], ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "{[":
            stack.append(char)
        elif char in "}]" and stack:
            stack.pop()
        elif char == "," and stack and stack[-1] == "{":
            pieces.append(line[start : index + 1])
            start = index + 1
        elif char == "#" and not stack:
            break
    pieces.append(line[start:])
    return [piece.strip() if i else piece.rstrip() for i, piece in enumerate(pieces)]


def _shape(segments: list[str]) -> tuple[str, ...]:
    return tuple(segment.lstrip("- {").split(":", 1)[0] for segment in segments)


def align_tables(lines: list[str]) -> list[str]:
    """Align runs of one-line flow mappings of one shape into columns. A run is made of such
    lines at one indentation; blank lines between them do not end it (a table in blocks)."""
    result = list(lines)
    index = 0
    while index < len(result):
        if _segments(result[index]) is None:
            index += 1
            continue
        members = [index]
        cursor = index + 1
        while cursor < len(result):
            if not result[cursor].strip():
                cursor += 1
                continue
            if _segments(result[cursor]) is None or _indent(result[cursor]) != _indent(
                result[index]
            ):
                break
            members.append(cursor)
            cursor += 1
        aligned = _aligned([result[m] for m in members])
        for member, line in zip(members, aligned, strict=True):
            result[member] = line
        index = members[-1] + 1
    return result


def _aligned(run: list[str]) -> list[str]:
    cut = [_segments(line) or [line] for line in run]
    shapes: dict[tuple[str, ...], list[int]] = {}
    for position, segments in enumerate(cut):
        shapes.setdefault(_shape(segments), []).append(position)
    for positions in shapes.values():
        count = len(cut[positions[0]])
        widths = [max(len(cut[p][column]) for p in positions) for column in range(count - 1)]
        for p in positions:
            cut[p] = [s.ljust(widths[c]) if c < count - 1 else s for c, s in enumerate(cut[p])]
    return [" ".join(segments) for segments in cut]
