"""Running the `visiongate` command for the CLI tests: in process, or as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from visiongate._schemas import SCHEMA_VERSIONS, load_schema
from visiongate.cli import main

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "policies"
FACTS = "mode=auto,catalog=vision,aux=unset,path=accepts"
TARGET = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`visiongate ARGV` in this process: (exit code, stdout, stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def environment(home: Path) -> dict[str, str]:
    """The environment of a real `visiongate` process, with private state and caches."""
    return {
        **os.environ,
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "VISIONGATE_CACHE_DIR": str(home / "images"),
    }


def run_process(
    argv: Sequence[str], home: Path, cwd: Path = ROOT, **options: Any
) -> subprocess.CompletedProcess[str]:
    """`visiongate ARGV` as a real process (text output captured unless told otherwise)."""
    options.setdefault("capture_output", "stdout" not in options)
    return subprocess.run(
        [sys.executable, "-m", "visiongate", *argv],
        cwd=cwd,
        env=environment(home),
        text=True,
        timeout=options.pop("timeout", 120),
        check=False,
        **options,
    )


def _registry() -> Registry:  # type: ignore[type-arg]
    resources = [
        (load_schema(name)["$id"], Resource.from_contents(load_schema(name)))
        for name in SCHEMA_VERSIONS
    ]
    return Registry().with_resources(resources)


def validate_output(name: str, document: Any) -> None:
    """`document` follows the shipped schema `name` and carries its `schema_version`."""
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema, registry=_registry())
    problems = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(document)
    ]
    assert not problems, problems[:5]
    assert document["schema_version"] == SCHEMA_VERSIONS[name]


def json_output(out: str) -> Any:
    """Standard output as exactly one JSON document (nothing before or after it)."""
    return json.loads(out)


def no_traceback(*texts: str) -> bool:
    joined = "\n".join(texts)
    return "Traceback" not in joined and "Exception ignored" not in joined
