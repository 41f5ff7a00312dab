"""The fenced code blocks of README.md and policy_docs/README.md, for `test_doc_examples`."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
REFERENCE = ROOT / "policy_docs" / "README.md"
_FENCE = re.compile(
    r"(?:<!-- (?P<marker>[\w:-]+) -->\n)?^```(?P<language>\w*)\n(?P<text>.*?)^```$", re.M | re.S
)


@dataclass(frozen=True)
class Block:
    file: str
    line: int
    language: str
    text: str
    marker: str | None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [
        Block(
            path.relative_to(ROOT).as_posix(),
            text.count("\n", 0, match.start("text")),
            match.group("language"),
            match.group("text"),
            match.group("marker"),
        )
        for match in _FENCE.finditer(text)
    ]


def every_block() -> list[Block]:
    return [*blocks(README), *blocks(REFERENCE)]


@dataclass(frozen=True)
class Command:
    where: str
    argv: tuple[str, ...]
    """Arguments after `visiongate`."""
    stdout_file: str | None = None
    """A `> FILE` redirection, as a shell would do it."""
    stdin_from: str | None = None
    """The shell command of a `CMD | visiongate ...` pipeline, whose output is the input."""

    @property
    def name(self) -> str:
        return f"{self.where}: visiongate {' '.join(self.argv)}"


def _command(where: str, line: str) -> Command | None:
    line = line.strip().removeprefix("$ ").strip()
    producer = None
    if " | visiongate " in line:
        producer, _, line = line.partition(" | ")
    if not line.startswith("visiongate "):
        return None
    words = shlex.split(line, comments=True)[1:]
    if ">" in words:
        position = words.index(">")
        return Command(where, tuple(words[:position]), words[position + 1], producer)
    return Command(where, tuple(words), stdin_from=producer)


def shell_commands(block: Block) -> list[Command]:
    """The `visiongate ...` lines of a shell block (a `$ ` prompt and comments stripped)."""
    found = [_command(block.where, line) for line in block.text.splitlines()]
    return [command for command in found if command is not None]


def workflow_commands(block: Block, steps: list[dict[str, object]]) -> list[Command]:
    """The `run: visiongate ...` steps of a GitHub Actions job."""
    runs = [str(step["run"]) for step in steps if isinstance(step.get("run"), str)]
    found = [_command(block.where, run) for run in runs if "${{" not in run]
    return [command for command in found if command is not None]


def operator_lines() -> list[str]:
    """The lines the README shows an operator for a misspelt key and provider (the block
    marked `ci:operator-lines`), without the commands and their comments."""
    (block,) = [b for b in blocks(README) if b.marker == "ci:operator-lines"]
    return [
        line
        for line in block.text.splitlines()
        if line.strip() and not line.startswith(("$ ", "#"))
    ]
