"""Helpers shared by the CLI commands: loading a gate and reporting errors the same way."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TypeVar

from visiongate.cli import EXIT_INVALID_POLICY, EXIT_USAGE
from visiongate.engine import PolicyError

T = TypeVar("T")


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", help="policy file or bundled name (default: `default`)")
    parser.add_argument("--config", help="agent config YAML (agent.image_input_mode, ...)")
    parser.add_argument("--catalog", help="model catalog in models.dev api.json shape")
    parser.add_argument("--registry", help="provider registry YAML (default: bundled)")


def guarded(action: Callable[[], T]) -> T | int:
    """Run `action`; print a policy error (exit 3) or a bad input error (exit 2) cleanly."""
    try:
        return action()
    except PolicyError as error:
        print(error.render(), file=sys.stderr)
        return EXIT_INVALID_POLICY
    except (ValueError, OSError) as error:
        print(f"visiongate: error: {error}", file=sys.stderr)
        return EXIT_USAGE
