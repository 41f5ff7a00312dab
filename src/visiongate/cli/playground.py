"""`visiongate playground`: edit a policy in a local web page and watch every cell change."""

from __future__ import annotations

import argparse
import sys

from visiongate.cli import EXIT_OK
from visiongate.cli._common import UsageError, check_input_file, checked, positive_seconds


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="the policy file to edit and save (or a bundled name, read only; default: the "
        "bundled default, read only)",
    )
    parser.add_argument("--config", metavar="FILE", help="an agent config, for the second tab")
    parser.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    parser.add_argument(
        "--lint-timeout",
        type=positive_seconds,
        default=5.0,
        metavar="SECONDS",
        help="cut off a lint that takes longer, with a message (default: 5)",
    )


def run(args: argparse.Namespace) -> int:
    from visiongate.cli._common import policy_reference
    from visiongate.cli._signals import Interrupted, signals_raise
    from visiongate.playground import address, bind, open_playground

    if not 0 <= args.port <= 65535:
        raise UsageError(f"`--port {args.port}` is not a port number (0 to 65535)")
    check_input_file(args.config, "agent config")
    policy = policy_reference(args.policy) if args.policy is not None else None
    playground = checked(lambda: open_playground(policy, args.config))
    playground.lint_seconds = args.lint_timeout
    try:
        server = bind(playground, args.port)
    except OSError as error:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {error.strerror}") from None
    try:
        playground.warm()
        where = playground.policy_label
        where += "" if playground.save_path else ", read only"
        # The address carries the token: without it printed, the page cannot be opened (a
        # closed or full standard output ends the command, exit 2, before it serves).
        print(f"visiongate playground for {where}: open {address(server)}", flush=True)
        print("stop it with Ctrl-C", file=sys.stderr, flush=True)
        with signals_raise():
            server.serve_forever()
    except Interrupted as stopped:
        print(f"visiongate playground: {stopped}", file=sys.stderr)
        return stopped.exit_code
    finally:
        server.server_close()
        playground.close()
    return EXIT_OK
