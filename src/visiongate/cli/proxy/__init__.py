"""`visiongate proxy`: put the gate in front of any MCP client, as an MCP server over stdio.

    visiongate proxy --provider anthropic --model claude-sonnet-4-5 -- npx -y some-server
    visiongate proxy --config agent.yaml --url https://example.com/mcp --header "X-Key:abc"
    visiongate proxy --print-config claude-desktop --provider P --model M -- npx some-server
    visiongate proxy --listen 127.0.0.1:8080 --provider P --model M -- npx some-server

A client's config swaps the server's command for `visiongate proxy ... -- <the command>`
(`--print-config CLIENT` prints that entry). Everything passes through except what must
change: every text the server sends is cleaned by the policy's `sanitize` rules, tool results
are routed by the gate for the provider and model (fitted pixels, or `MEDIA:` paths and
descriptions), and no message over the client's limit (`--max-result-bytes`, `--client`) is
forwarded. One decision record per tool call goes to `--trace`. `--policy` is watched: an edit
applies to the next call; a broken edit keeps the last good policy, with a warning in every
record. Standard output carries protocol messages only; logs go to standard error.

`--listen HOST:PORT` serves many clients instead, over MCP Streamable HTTP: a session and a
server each, each client's model from its `X-Visiongate-Provider`/`X-Visiongate-Model`
headers (see the gateway options below and the README's "Run it for a team").

Exit: 0 when the client closes the session, 2 when the server exits or cannot be started
(the client restarts the proxy), 3 for a policy or config that fails to load, 130/143 on
Ctrl-C/SIGTERM. The server is always stopped (stdin closed, SIGTERM, SIGKILL to its group).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from visiongate.cli import EXIT_USAGE
from visiongate.cli._common import (
    UsageError,
    check_gate_inputs,
    checked,
    target_model,
)

from ._options import add_options

if TYPE_CHECKING:
    from visiongate.adapters.proxy import ProxyOptions


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_options(parser)


def _command(args: argparse.Namespace) -> list[str]:
    command: list[str] = args.server[1:] if args.server[:1] == ["--"] else args.server
    if command and args.url:
        raise UsageError("give either a server command after `--` or `--url`, not both")
    if not command and not args.url:
        raise UsageError("give the server command after `--`, or `--url`")
    if args.header and not args.url:
        raise UsageError("`--header` applies to `--url` servers only")
    if args.url and not args.url.lower().startswith(("http://", "https://")):
        raise UsageError(
            f"`--url {args.url}`: a Streamable HTTP server's URL starts with http(s)://"
        )
    if (args.provider is None) != (args.model is None):
        raise UsageError("give both `--provider` and `--model`, or neither (with `--config`)")
    if args.provider is None and args.config is None:
        raise UsageError("give `--provider` and `--model`, or `--config` naming the main model")
    return command


def run(args: argparse.Namespace) -> int:
    command = _command(args)
    headers = dict(_header(item) for item in args.header)
    from visiongate.cli.proxy._gateway import gateway_flags_given, run_gateway

    if args.listen is not None:
        if args.print_config:
            raise UsageError(
                "`--print-config` is for stdio clients; a gateway's clients take its URL"
            )
        return run_gateway(args, command, headers)
    given = gateway_flags_given(args)
    if given:
        raise UsageError(f"`{given[0]}` applies to the gateway only (`--listen HOST:PORT`)")
    if args.print_config:
        return _print_config(args, command)
    if _stdout_closed():
        print(
            "visiongate: error: cannot write the output: standard output is closed", file=sys.stderr
        )
        return EXIT_USAGE
    return _serve(args, command, headers)


def _header(item: str) -> tuple[str, str]:
    name, colon, value = item.partition(":")
    if not colon or not name.strip():
        raise UsageError(f"`--header` takes NAME:VALUE, not `{item}`")
    return name.strip(), value.strip()


def _stdout_closed() -> bool:
    try:
        os.fstat(1)
    except OSError:
        return True
    return False


def _serve(args: argparse.Namespace, command: list[str], headers: dict[str, str]) -> int:
    from visiongate.cli._signals import Interrupted, signals_held, signals_raise

    started: Any = None
    try:
        with signals_raise():
            # The server first: it boots while the policy loads (see `adapters.proxy._serve`).
            if command:
                from visiongate.adapters.mcp._child import start_server

                with signals_held():  # a signal waits until `started` holds the server
                    started = start_server(command)
            check_gate_inputs(args)
            return _gate_and_relay(args, command, headers, started)
    except Interrupted as stopped:
        print(f"visiongate proxy: {stopped}; the server was stopped", file=sys.stderr)
        return stopped.exit_code
    finally:
        if _unreleased(started):
            started.kill()  # never reached the relay (a bad policy, a signal): stop it now


def _unreleased(started: Any) -> bool:
    """A server started here that the relay did not stop: still running, or exited with its
    watchdog (and maybe children in its group) still there."""
    if started is None or not hasattr(started, "kill"):  # nothing started, or a SpawnError
        return False
    return started.returncode is None or started.watchdog is not None


def _gate_and_relay(
    args: argparse.Namespace, command: list[str], headers: dict[str, str], started: Any
) -> int:
    from visiongate.adapters.proxy._downstream import protect_stdout
    from visiongate.cli._signals import run_until_signal

    gate, options = checked(lambda: proxy_options(args, command, headers, notices_now=False))
    notices = _StartNotices(gate, options.target.provider, options.target.model)
    try:
        with protect_stdout():
            return checked(
                lambda: run_until_signal(lambda: _session(gate, options, started, notices.say))
            )
    finally:
        notices.say()  # the session ended before its first answer: they are said all the same
        gate.close()


async def _session(
    gate: Any, options: ProxyOptions, started: Any, say_notices: Callable[[], None]
) -> int:
    from visiongate.adapters.proxy import serve

    return await serve(gate, options, started=started, notices=say_notices)


def proxy_options(
    args: argparse.Namespace,
    command: list[str],
    headers: dict[str, str],
    *,
    extra_trace: Any = None,
    notices_now: bool = True,
) -> tuple[Any, ProxyOptions]:
    """The gate and the relay's options from the command line (`extra_trace`: one more trace
    sink, the gateway's metrics). The target's warnings are said on stderr now, unless
    `notices_now` is false: the stdio proxy says them once its first answer is on its way."""
    from visiongate.adapters.proxy import DEFAULT_MAX_MESSAGE_BYTES, ProxyOptions, ProxyTarget
    from visiongate.adapters.proxy.clients._config import CLIENT_LIMITS, DEFAULT_MAX_RESULT_BYTES
    from visiongate.engine import Gate

    if args.url:  # only the HTTP transport is the SDK's
        from visiongate.adapters.mcp._sdk import require_client_sdk

        require_client_sdk()
    trace = [sink for sink in (args.trace, extra_trace) if sink is not None]
    gate = Gate.load(args.policy, args.config, args.catalog, args.registry, trace=trace or None)
    provider, model = target_model(args, gate)
    if notices_now:
        _say_notices(gate, provider, model)
    limit = args.max_result_bytes or CLIENT_LIMITS.get(args.client or "", DEFAULT_MAX_RESULT_BYTES)
    watch = args.policy is not None and os.path.isfile(args.policy)
    if watch:
        gate.watch()
    # `gate.config`, not the resolver's: the catalog and registry load after the first answer.
    if args.catalog is None and gate.config.catalog_refresh:
        from visiongate.engine.facts._catalog_store import URL_ENV, CatalogRefresher

        # `$VISIONGATE_CATALOG_URL` wins over the config's `models_dev.url`, as in `update`.
        url = os.environ.get(URL_ENV) or gate.resolver.config.catalog_url
        CatalogRefresher(gate.resolver, url=url).start()  # a daemon thread, off the decide path
    options = ProxyOptions(
        target=ProxyTarget(provider, model, limit),
        command=tuple(command),
        url=args.url,
        headers=headers,
        timeout=args.timeout,
        max_message_bytes=args.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES,
        watch_policy=watch,
        cache_dir=args.cache_dir,
        image_tool=not args.no_image_tool,
    )
    return gate, options


def _say_notices(gate: Any, provider: str, model: str) -> None:
    """The config's warnings and the target's did-you-means on stderr, once, at start."""
    from visiongate.adapters.proxy._serve import target_notices

    for line in target_notices(gate, provider, model):
        print(f"visiongate proxy: {line}", file=sys.stderr, flush=True)


class _StartNotices:
    """`_say_notices`, once: from the relay's warm-up thread when the first answer is on its
    way (resolving the target loads the model catalog and the provider registry, work the
    client's handshake need not wait for), or at the end of a session that never answered."""

    def __init__(self, gate: Any, provider: str, model: str) -> None:
        self._target = (gate, provider, model)
        self._lock = threading.Lock()
        self._said = False

    def say(self) -> None:
        with self._lock:
            if self._said:
                return
            self._said = True
            try:
                _say_notices(*self._target)
            except Exception as error:  # the warnings are lost, not the session: said so
                from visiongate.adapters.sanitize._line import untrusted_line

                text = untrusted_line(f"{type(error).__name__}: {error}", 200)
                print(
                    f"visiongate proxy: cannot say the target's warnings: {text}", file=sys.stderr
                )


def _print_config(args: argparse.Namespace, command: list[str]) -> int:
    from visiongate.adapters.proxy.clients._config import CLIENT_LIMITS, server_name, snippet

    proxy_args = ["proxy", *_forwarded(args)]
    if args.client is None and args.max_result_bytes is None and args.print_config in CLIENT_LIMITS:
        proxy_args += ["--client", args.print_config]
    proxy_args += ["--url", args.url] if args.url else ["--", *_resolved(command)]
    name = args.name or server_name(command, args.url)
    executable = _executable()
    print(snippet(args.print_config, name, executable, proxy_args))
    return 0


def _resolved(command: list[str]) -> list[str]:
    """The server command as a client started elsewhere can run it: the program by its
    absolute path (`shutil.which`), and arguments that name files here made absolute. A program
    this PATH does not have is kept as typed, with a warning."""
    program, *arguments = command
    found = shutil.which(program)
    if found is None:
        print(
            f"visiongate proxy: warning: `{program}` is not found on this PATH; the client "
            "must find it on its own (give its absolute path)",
            file=sys.stderr,
        )
    shown = os.path.abspath(found) if found else program
    return [shown, *(os.path.abspath(word) if _names_file(word) else word for word in arguments)]


def _names_file(word: str) -> bool:
    """An argument that names a file or folder from here (`server.py`, `./dist/index.js`)."""
    return not word.startswith("-") and not os.path.isabs(word) and os.path.exists(word)


def _executable() -> str:
    """This `visiongate`, named absolutely: desktop clients do not read the shell's PATH."""
    started = sys.argv[0] if sys.argv else ""
    if os.path.basename(started) == "visiongate" and os.path.isfile(started):
        return os.path.abspath(started)
    return shutil.which("visiongate") or "visiongate"


def _forwarded(args: argparse.Namespace) -> list[str]:
    """The options of this command line that the client must pass to the proxy, in order."""
    words: list[str] = []
    for flag, value in (
        ("--provider", args.provider),
        ("--model", args.model),
        ("--config", _absolute(args.config)),
        (
            "--policy",
            _absolute(args.policy) if args.policy and os.path.isfile(args.policy) else args.policy,
        ),
        ("--catalog", _absolute(args.catalog)),
        ("--registry", _absolute(args.registry)),
        ("--trace", _absolute(args.trace)),
        ("--timeout", None if args.timeout == 120.0 else f"{args.timeout:g}"),
        ("--max-result-bytes", args.max_result_bytes),
        ("--client", args.client),
        ("--max-message-bytes", args.max_message_bytes),
        ("--cache-dir", _absolute(args.cache_dir)),
    ):
        if value is not None:
            words += [flag, str(value)]
    if args.no_image_tool:
        words.append("--no-image-tool")
    for header in args.header:
        words += ["--header", header]
    return words


def _absolute(path: str | None) -> str | None:
    """Clients start servers from their own working directory: files are named absolutely."""
    return os.path.abspath(path) if path else None
