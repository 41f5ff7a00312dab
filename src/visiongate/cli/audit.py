"""`visiongate audit TRACE.jsonl ...`: what was decided, under which policy, and what to look at."""

from __future__ import annotations

import argparse
import sys

from visiongate.cli import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from visiongate.engine.tooling.audit._read import (
    TraceRecord,
    find_decision,
    parse_time,
    read_traces,
    summarize,
    within,
)
from visiongate.engine.tooling.audit._report import explain_record, render_json, render_text

HELP = "summarize decision traces for auditors, or explain one decision (--decision ID)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("traces", nargs="+", metavar="TRACE.jsonl", help="trace files (JSON lines)")
    parser.add_argument(
        "--since", metavar="TIME", help="only decisions at or after TIME (RFC 3339 or date)"
    )
    parser.add_argument("--until", metavar="TIME", help="only decisions at or before TIME")
    parser.add_argument("--decision", metavar="ID", help="explain one decision in plain words")
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="compare every decision with this policy file instead of its own path",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        since = parse_time(args.since) if args.since else None
        until = parse_time(args.until) if args.until else None
    except ValueError as error:
        print(f"visiongate audit: error: bad time: {error}", file=sys.stderr)
        return EXIT_USAGE
    records, malformed = read_traces(args.traces)
    records = within(records, since, until)
    if args.decision:
        for item in malformed:
            print(f"malformed (skipped): {item}", file=sys.stderr)
        return _explain(records, args.decision, args.policy)
    summary = summarize(records, malformed, args.policy)
    print(render_json(summary) if args.json else render_text(summary))
    return EXIT_FINDINGS if malformed else EXIT_OK


def _explain(records: list[TraceRecord], decision: str, policy: str | None) -> int:
    found = find_decision(records, decision)
    if len(found) != 1:
        problem = "no decision" if not found else f"{len(found)} decisions"
        print(f"visiongate audit: {problem} with id `{decision}`", file=sys.stderr)
        return EXIT_FINDINGS
    print(explain_record(found[0], policy))
    return EXIT_OK
