"""`visiongate version` (and `visiongate --version`): the versions a bug report needs."""

from __future__ import annotations

import argparse

from visiongate.cli import EXIT_OK
from visiongate.cli._common import print_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the versions as JSON")


def versions() -> dict[str, object]:
    """The package, the policy language, the decision record and the JSON outputs."""
    from visiongate import __version__
    from visiongate._schemas import SCHEMA_VERSIONS
    from visiongate.engine._vocabulary import LANGUAGE_VERSION

    return {
        "schema_version": 1,
        "visiongate": __version__,
        "policy_language": LANGUAGE_VERSION,
        "decision_record": SCHEMA_VERSIONS["decision-record"],
        "json_outputs": dict(SCHEMA_VERSIONS),
    }


def run(args: argparse.Namespace) -> int:
    found = versions()
    if args.json:
        print_json(found)
        return EXIT_OK
    print(
        f"visiongate {found['visiongate']} (policy language {found['policy_language']}, "
        f"decision record schema {found['decision_record']})"
    )
    return EXIT_OK
