"""The stdio proxy's start-up warnings come after its first answer, and are never lost (issue 37).

Resolving the target (the model catalog and the provider registry) is off the handshake's
path: the warnings are said from the warm-up thread once the first answer is on its way, after
`NOTICES_WITHOUT_ANSWER_S` when the server is slow to give one, and as the session ends when
it never did. Each case runs the real proxy with a misspelt provider, whose did-you-mean must
be on stderr exactly once however the session goes.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path

import pytest
from _proxy_helpers import INITIALIZE, INSTANT_SERVER, proxy_argv, proxy_env

MISSPELT = ("--provider", "openruter", "--model", "anthropic/claude-sonnet-4.5")
WARNING = (
    "visiongate proxy: warning: provider `openruter` is in neither providers.yaml nor the "
    "catalog, so its route refuses: did you mean `openrouter`?"
)
SLOW_SERVER = "import time; time.sleep(6)\n" + INSTANT_SERVER
"""Answers every request, but only after six seconds."""


def start(home: Path, server: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        proxy_argv(server, target=MISSPELT),
        cwd=home,
        env=proxy_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def ask_initialize(proxy: subprocess.Popen[bytes]) -> None:
    assert proxy.stdin is not None
    proxy.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proxy.stdin.flush()


def finish(proxy: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Close the client's side; the exit status and the whole of stderr."""
    _, err = proxy.communicate(timeout=60)
    assert "Traceback" not in err.decode(), err.decode()
    return proxy.returncode, err.decode()


def test_the_warning_follows_the_first_answer(tmp_path: Path) -> None:
    with start(tmp_path, [sys.executable, "-c", INSTANT_SERVER]) as proxy:
        ask_initialize(proxy)
        assert proxy.stdout is not None
        answer = json.loads(proxy.stdout.readline())
        assert answer["result"]["serverInfo"]["name"] == "plain"
        assert proxy.stderr is not None
        assert proxy.stderr.readline().decode().rstrip("\n") == WARNING  # said by the warm-up
        code, err = finish(proxy)
    assert code == 0 and WARNING not in err  # once


@pytest.mark.parametrize(
    "server",
    [
        pytest.param([sys.executable, "-c", "import sys; sys.exit(1)"], id="server-dies"),
        pytest.param(["/nonexistent/visiongate-test-server"], id="server-cannot-start"),
    ],
)
def test_a_session_with_no_answer_from_the_server_still_says_the_warning(
    tmp_path: Path, server: list[str]
) -> None:
    with start(tmp_path, server) as proxy:
        ask_initialize(proxy)
        code, err = finish(proxy)
    assert code == 2 and err.count(WARNING) == 1, err


def test_a_client_that_leaves_before_any_answer_still_gets_the_warning_said(
    tmp_path: Path,
) -> None:
    with start(tmp_path, [sys.executable, "-c", SLOW_SERVER]) as proxy:
        code, err = finish(proxy)  # stdin closed at once: no request, no answer
    assert code == 0 and err.count(WARNING) == 1, err


def test_a_slow_server_does_not_hold_the_warning_back(tmp_path: Path) -> None:
    with start(tmp_path, [sys.executable, "-c", SLOW_SERVER]) as proxy:
        ask_initialize(proxy)
        assert proxy.stderr is not None and proxy.stdout is not None
        assert proxy.stderr.readline().decode().rstrip("\n") == WARNING  # after about 2 s
        assert not select.select([proxy.stdout], [], [], 0)[0]  # the answer is 4 s away
        assert json.loads(proxy.stdout.readline())["id"] == 1
        code, err = finish(proxy)
    assert code == 0 and WARNING not in err
