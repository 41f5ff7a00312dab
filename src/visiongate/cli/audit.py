"""`visiongate audit PATH|GLOB|- ...`: what was decided, under which policy, what to look at.

Exit codes: 0 no finding; 1 findings (decisions under a stale policy, native lanes for
models the catalog does not confirm, malformed lines); 2 bad usage, an input that cannot be
read, or a `--decision` id that names no decision (several decisions sharing one id are a
finding); 3 a `--policy` file that is not a valid policy.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK, EXIT_USAGE
from visiongate.cli._common import UsageError, add_format_arguments, chosen_format, write_output

if TYPE_CHECKING:
    from visiongate.engine.tooling.audit._aggregate import Query
    from visiongate.engine.tooling.audit._inputs import TraceInput
    from visiongate.engine.tooling.audit._result import AuditResult

FILTERS = ("provider", "model", "lane", "rule", "source")
# Copies of the engine's `_report.FORMATS` and `_result.GROUP_NAMES` (a test keeps them
# equal): `audit --help` must not import the engine, which reads the rules engine and YAML.
FORMATS = ("text", "json", "csv")
GROUP_NAMES = (
    "provider", "model", "lane", "rule", "policy", "source",
    "mode", "catalog", "aux", "path", "day", "hour",
)  # fmt: skip


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "traces",
        nargs="+",
        metavar="PATH|GLOB|-",
        help="trace files (JSON lines, gzip too), directories of them, globs, or - for stdin",
    )
    parser.add_argument("--since", metavar="TIME", help="decisions at or after TIME (RFC 3339)")
    parser.add_argument("--until", metavar="TIME", help="decisions at or before TIME")
    for name in FILTERS:
        parser.add_argument(
            f"--{name}", metavar="VALUE", action="append", help=f"only this {name} (repeatable)"
        )
    parser.add_argument(
        "--policy-sha", metavar="PREFIX", action="append", help="only this policy sha256 prefix"
    )
    parser.add_argument(
        "--group-by",
        metavar="DIMS",
        help=f"count decisions by comma-separated dimensions: {', '.join(GROUP_NAMES)}",
    )
    add_format_arguments(parser, FORMATS)
    parser.add_argument("--decision", metavar="ID", help="explain one decision in plain words")
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="also write a self-contained HTML report (charts, findings) to FILE",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=_cores(),
        metavar="N",
        help="processes reading large files in parallel (default: the usable cores, at most 4)",
    )
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="compare every decision with this policy file instead of the one it names",
    )


def run(args: argparse.Namespace) -> int:
    from visiongate.engine import PolicyError, load_policy
    from visiongate.engine.tooling.audit._inputs import InputError, expand
    from visiongate.engine.tooling.audit._parallel import aggregate_in_parallel
    from visiongate.engine.tooling.audit._report import render

    args.format = chosen_format(args)  # `--json` is `--format json`
    try:
        query = _query(args)
        inputs = expand(args.traces)
        if args.policy is not None:
            load_policy(Path(args.policy))  # compared by content, but it must be a policy
    except PolicyError as error:
        print(error.render(), file=sys.stderr)
        return EXIT_INVALID_POLICY
    except (ValueError, InputError, OSError) as error:
        print(f"visiongate audit: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.decision:
        if args.html:
            raise UsageError("--html reports a summary; it cannot be used with --decision")
        return _explain(inputs, args.decision, query, args.policy)
    result = aggregate_in_parallel(inputs, query, args.policy, args.jobs)
    if args.html:
        _write_report(result, args.html)
    print(render(result, args.format))
    for problem in result.input_errors:
        print(f"visiongate audit: error: {problem}", file=sys.stderr)
    if result.input_errors:
        return EXIT_USAGE
    return EXIT_FINDINGS if result.findings else EXIT_OK


def _write_report(result: AuditResult, target: str) -> None:
    from visiongate.engine.tooling.pictures import render_audit_report

    write_output(target, render_audit_report(result))
    print(f"visiongate audit: report written to {target}", file=sys.stderr)


def _cores() -> int:
    return min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)


def _query(args: argparse.Namespace) -> Query:
    from visiongate.engine.tooling.audit._aggregate import Query
    from visiongate.engine.tooling.audit._filters import CLOSED, check_closed, check_sha_prefixes
    from visiongate.kernel._suggest import did_you_mean

    since = _time(args.since, "--since")
    until = _time(args.until, "--until")
    group_by = tuple(part.strip() for part in (args.group_by or "").split(",") if part.strip())
    group_by = tuple("policy" if name == "policy-sha" else name for name in group_by)
    unknown = [name for name in group_by if name not in GROUP_NAMES]
    if unknown:
        raise ValueError(f"cannot group by `{unknown[0]}`: {did_you_mean(unknown[0], GROUP_NAMES)}")
    chosen = {name: _values(getattr(args, name)) for name in FILTERS}
    for name in CLOSED:
        check_closed(name, sorted(chosen[name]))
    check_sha_prefixes(sorted(_values(args.policy_sha)))
    return Query(
        since=since,
        until=until,
        providers=chosen["provider"],
        models=chosen["model"],
        lanes=chosen["lane"],
        rules=chosen["rule"],
        sources=chosen["source"],
        policy_shas=tuple(sorted(_values(args.policy_sha))),
        group_by=group_by,
    )


def _time(text: str | None, option: str) -> datetime | None:
    from visiongate.engine.tooling.audit._read import parse_time

    if text is None:
        return None
    try:
        return parse_time(text)
    except ValueError:
        raise ValueError(f"bad time for {option}: `{text}` (use RFC 3339 or a date)") from None


def _values(given: list[str] | None) -> frozenset[str]:
    return frozenset(v.strip() for item in given or () for v in item.split(",") if v.strip())


def _explain(inputs: list[TraceInput], decision: str, query: Query, policy: str | None) -> int:
    from visiongate.engine.tooling.audit._explain import explain_record
    from visiongate.engine.tooling.audit._find import find_decision

    search = find_decision(inputs, decision)
    for problem in search.input_errors:
        print(f"visiongate audit: error: {problem}", file=sys.stderr)
    found = [record for record in search.found if query.admits(record.row)]
    if len(found) != 1:
        count = len(found) if search.exact else search.prefixed_count
        problem = "no decision" if not found else f"{count} decisions"
        print(f"visiongate audit: {problem} with id `{decision}`", file=sys.stderr)
        for record in found[:10]:
            print(f"  {record.decision_id} [{record.file}:{record.line}]", file=sys.stderr)
        if not found or search.input_errors:
            return EXIT_USAGE  # an id that names no decision is a bad input
        return EXIT_FINDINGS  # several decisions share one id: the trace itself is suspect
    print(explain_record(found[0], policy))
    return EXIT_USAGE if search.input_errors else EXIT_OK
