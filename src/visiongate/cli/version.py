"""`visiongate version` (and `visiongate --version`): the versions a bug report needs."""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
from pathlib import Path

from visiongate.cli import EXIT_OK
from visiongate.cli._common import print_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the versions as JSON")


def versions() -> dict[str, object]:
    """The package, the policy language, the decision record, the JSON outputs, and whether
    the sanitizer's C scanner is in use."""
    from visiongate import __version__
    from visiongate._schemas import SCHEMA_VERSIONS
    from visiongate.engine._vocabulary import LANGUAGE_VERSION

    return {
        "schema_version": 1,
        "visiongate": __version__,
        "policy_language": LANGUAGE_VERSION,
        "decision_record": SCHEMA_VERSIONS["decision-record"],
        "json_outputs": dict(SCHEMA_VERSIONS),
        "sanitizer_scanner": "c" if _scanner_loads() else "python",
    }


_SCANNER = "visiongate.adapters.sanitize._bulk._scanner"


def _scanner_loads() -> bool:
    """Whether the sanitizer's C scanner is built and loads here: found where the sanitizer's
    import finds it, without importing the sanitizer (the engine, `regex`: about 0.3 s)."""
    adapters = importlib.util.find_spec("visiongate.adapters")
    roots = (adapters.submodule_search_locations or []) if adapters is not None else []
    suffixes = (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)
    for root in roots:
        finder = importlib.machinery.FileFinder(str(Path(root, "sanitize", "_bulk")), suffixes)
        spec = finder.find_spec(_SCANNER)
        if spec is None or spec.loader is None:
            continue
        try:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        except ImportError:  # built for another interpreter, say
            return False
        return True
    return False


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
