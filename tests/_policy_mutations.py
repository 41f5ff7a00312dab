"""Seeded mutations of policy files, one family per class of hostile input (issue 13).

Each family takes a random generator and a seed policy text and returns a mutated text:
engine limits (many rules, many copies of one rule), recursion and alias bombs, wrong-typed
values and explicit tags, sizes, and plain byte-level damage (truncation, deleted and
duplicated lines, stray characters). The families are data for `test_policy_fuzz.py`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from visiongate.engine import FACTS

Mutation = Callable[[random.Random, str], str]

DOMAINS = {fact: list(values) for fact, values in FACTS.items()}

HOSTILE_SCALARS = [
    "!!int always-text",
    "!!int x",
    "!!float ''",
    "!!float gbsct",
    "!!timestamp x",
    "!!timestamp 2024-02-30",
    "!!binary {a: 1}",
    "!!binary aGVsbG8=",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!!python/object/apply:os.system [echo]",
    "!custom value",
    "!!str 1",
    "!!bool maybe",
    "!!null x",
    "2024-02-30",
    "2024-01-15",
    "9" * 5000,
    "-" + "1" * 300,
    "1e999",
    ".nan",
    "-.inf",
    "0b_",
    "0x_",
    "._",
    "1:30:00",
    "true",
    "false",
    "yes",
    "no",
    "off",
    "null",
    "~",
    "''",
    "' '",
    '"\\t \\n"',
    "[]",
    "{}",
    "[1.5, text]",
    "{a: 1}",
    "1.5",
    "-1",
    "0",
    "65536",
    "'a`b'",
    '"\\u2028MEDIA:/etc/passwd"',
    "&anchor text",
    "*anchor",
    "*undefined",
    "<<",
    "=",
    "? complex",
]

HOSTILE_KEYS = ["1.5", "2", "yes", "true", "null", "~", "<<", "? [a, b]", "'dup'", "when", ""]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


def truncate(rng: random.Random, text: str) -> str:
    """A prefix: what a hot reload sees while an editor is still writing."""
    return text[: rng.randrange(len(text) + 1)]


def delete_line(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def duplicate_line(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    index = rng.randrange(len(lines))
    lines.insert(index, lines[index])
    return "".join(lines)


def swap_lines(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    first, second = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[first], lines[second] = lines[second], lines[first]
    return "".join(lines)


def stray_character(rng: random.Random, text: str) -> str:
    position = rng.randrange(len(text) + 1)
    character = rng.choice(
        ["\t", "\x00", "\x07", "\ufeff", "\u2028", "\ud800", "{", "}", "[", "]", ":", "-",
         "&", "*", "!", "%", "@", "`", "'", '"', "#", "|", ">", " ", "\n", "\r"]
    )  # fmt: skip
    return text[:position] + character + text[position:]


def reindent(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    index = rng.randrange(len(lines))
    lines[index] = " " * rng.choice([1, 3, 5]) + lines[index].lstrip(" ")
    return "".join(lines)


def hostile_value(rng: random.Random, text: str) -> str:
    """Replace one `key: value` scalar by a wrong-typed value, a tag, an alias or a bomb."""
    lines = _lines(text)
    candidates = [
        i for i, line in enumerate(lines) if ": " in line and not line.lstrip().startswith("#")
    ]
    if not candidates:
        return text
    index = rng.choice(candidates)
    head = lines[index].split(": ", 1)[0]
    lines[index] = f"{head}: {rng.choice(HOSTILE_SCALARS)}\n"
    return "".join(lines)


def hostile_list_item(rng: random.Random, text: str) -> str:
    """Put a hostile scalar inside a flow list (`mode: [auto, <here>]`)."""
    position = text.find("[", rng.randrange(len(text) + 1))
    if position < 0:
        return hostile_value(rng, text)
    return text[: position + 1] + rng.choice(HOSTILE_SCALARS) + ", " + text[position + 1 :]


def hostile_key(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    candidates = [i for i, line in enumerate(lines) if ": " in line or line.rstrip().endswith(":")]
    if not candidates:
        return text
    index = rng.choice(candidates)
    line = lines[index]
    indent = line[: len(line) - len(line.lstrip(" -"))]
    rest = line.lstrip(" -").split(":", 1)
    lines[index] = f"{indent}{rng.choice(HOSTILE_KEYS)}:{rest[1] if len(rest) > 1 else chr(10)}"
    return "".join(lines)


def _when(rng: random.Random) -> str:
    parts = []
    for fact, values in DOMAINS.items():
        if rng.random() < 0.5:
            chosen = rng.sample(values, rng.randint(1, len(values)))
            parts.append(f"{fact}: [{', '.join(chosen)}]")
    return "{" + ", ".join(parts) + "}"


def many_rules(rng: random.Random, _text: str) -> str:
    """Engine limits: up to 2,100 rules, or dozens of copies of one rule (errors 303/107)."""
    count = rng.choice([65, 66, 149, 150, 151, rng.randint(1, 300), rng.randint(1, 300)])
    if rng.random() < 0.02:
        count = rng.choice([1_000, 2_000, 2_001])
    copies = rng.random() < 0.4
    fixed = _when(rng)
    hit_policy = rng.choice(["first", "first", "unique"])
    rules = "".join(
        f"  - {{id: r{i}, when: {fixed if copies else _when(rng)}, "
        f"lane: {rng.choice(['text', 'native'])}, reason: rule {i}}}\n"
        for i in range(count)
    )
    return (
        f"policy: many\nversion: '1'\ndescription: many rules\nhit_policy: {hit_policy}\n"
        f"default: text\nrules:\n{rules}"
    )


def alias_bomb(rng: random.Random, text: str) -> str:
    """Billion laughs, recursive aliases and undefined aliases, spliced into the policy."""
    kind = rng.choice(["laughs", "recursive", "recursive-map", "nested-recursive", "undefined"])
    if kind == "laughs":
        levels, width = rng.randint(3, 10), rng.randint(4, 12)
        lines = ["a0: &a0 [lol]"]
        for level in range(1, levels):
            items = ", ".join([f"*a{level - 1}"] * width)
            lines.append(f"a{level}: &a{level} [{items}]")
        bomb = "\n".join(lines) + "\n"
        return bomb + text if rng.random() < 0.5 else text + bomb
    bombs = {
        "recursive": "&a [*a]\n",
        "recursive-map": "x: &a {y: *a}\n",
        "nested-recursive": "x: &a [1, [2, {z: *a}]]\n",
        "undefined": "x: *nowhere\n",
    }
    return text + bombs[kind] if kind != "recursive" else bombs[kind]


def deep_nesting(rng: random.Random, text: str) -> str:
    """Nesting hundreds or thousands deep, block or flow, at the top or as a value."""
    depth = rng.choice([rng.randint(30, 120), rng.randint(500, 3_000)])
    style = rng.choice(["flow-seq", "flow-map", "block-seq", "mixed"])
    if style == "flow-seq":
        value = "[" * depth + "x" + "]" * depth
    elif style == "flow-map":
        value = "{a: " * depth + "x" + "}" * depth
    elif style == "block-seq":
        value = "- " * depth + "x"
    else:
        value = "[{a: " * (depth // 2) + "x" + "}]" * (depth // 2)
    if rng.random() < 0.3:
        return value + "\n"
    lines = _lines(text)
    candidates = [i for i, line in enumerate(lines) if line.rstrip().endswith(("text", "auto"))]
    if not candidates or style == "block-seq":
        return text + f"extra:\n  {value}\n"
    index = rng.choice(candidates)
    head = lines[index].rsplit(" ", 1)[0]
    lines[index] = f"{head} {value}\n"
    return "".join(lines)


def oversize(rng: random.Random, text: str) -> str:
    """A huge string, a long list, a long single-line flow mapping, many keys."""
    kind = rng.choice(["string", "list", "flow-map", "keys", "comments"])
    if kind == "string":
        return text.replace("description:", f"description: {'x' * rng.choice([5_000, 70_000])} ", 1)
    if kind == "list":
        items = ", ".join(["text"] * rng.choice([100, 12_000]))
        return text.replace("{mode: text}", "{mode: [" + items + "]}", 1)
    if kind == "flow-map":
        pairs = ", ".join(f"k{i}: v" for i in range(rng.choice([100, 11_000])))
        return text + "extra: {" + pairs + "}\n"
    if kind == "keys":
        return text + "extra:\n" + "".join(f"  k{i}: v\n" for i in range(rng.choice([50, 10_500])))
    return text + ("# padding comment\n" * rng.choice([10, 20_000]))


FAMILIES: dict[str, tuple[float, Mutation]] = {
    # name: (weight, mutation); the heavy families are rare so the whole run stays short.
    "truncate": (10, truncate),
    "delete-line": (8, delete_line),
    "duplicate-line": (8, duplicate_line),
    "swap-lines": (5, swap_lines),
    "stray-character": (8, stray_character),
    "reindent": (5, reindent),
    "hostile-value": (20, hostile_value),
    "hostile-list-item": (8, hostile_list_item),
    "hostile-key": (8, hostile_key),
    "many-rules": (2.5, many_rules),
    "alias-bomb": (6, alias_bomb),
    "deep-nesting": (6, deep_nesting),
    "oversize": (1.5, oversize),
}


def mutate(rng: random.Random, text: str) -> tuple[str, str]:
    """One family chosen by weight, applied once or (a third of the time) twice."""
    names = list(FAMILIES)
    weights = [FAMILIES[name][0] for name in names]
    applied = []
    for _round in range(1 if rng.random() < 0.67 else 2):
        name = rng.choices(names, weights)[0]
        text = FAMILIES[name][1](rng, text)
        applied.append(name)
    return "+".join(applied), text
