"""Fuzz: whatever reaches the playground's server, it answers with one clear JSON refusal or a
result, never a traceback nor a hang, and the page's next request is answered as before.

Seeded mutations of real requests (the page's own bodies: the default policy and its
mutations, an agent config, a route), raw byte bodies, wrong kinds of JSON, unknown actions,
missing or foreign headers; one server with its real worker, over real HTTP on loopback.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from visiongate.engine._load import bundled_policy_text
from visiongate.playground import Playground, bind, open_playground
from visiongate.playground._server import TOKEN_HEADER

CASES = 400
DEFAULT = bundled_policy_text("default")
ACTIONS = ("analyze", "tests", "route", "save", "state", "nosuch")
STATUSES = {200, 400, 403, 404, 411, 413, 421}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Playground, int, Path]]:
    folder = tmp_path_factory.mktemp("playground-fuzz")
    policy = folder / "fuzzed.yaml"
    policy.write_text(DEFAULT, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VISIONGATE_CACHE_DIR", str(tmp_path_factory.mktemp("images")))
        playground = open_playground(str(policy), None)
        server = bind(playground, 0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield playground, server.server_address[1], policy
        finally:
            server.shutdown()
            server.server_close()
            playground.close()
            thread.join(10)


def _mutated(text: str, rng: random.Random) -> str:
    """The text with a few characters replaced, deleted or repeated, or cut short."""
    characters = list(text)
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(characters))
        choice = rng.random()
        if choice < 0.4:
            characters[at] = rng.choice(":-[]{}&*!|>'\"#\n\t x0\u202e\u200b")
        elif choice < 0.7:
            del characters[at]
        else:
            characters[at:at] = characters[at : at + rng.randint(1, 40)] * rng.randint(1, 30)
    mutated = "".join(characters)
    return mutated[: rng.randrange(len(mutated) + 1)] if rng.random() < 0.15 else mutated


def _body(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.55:
        document: object = {
            "policy": _mutated(DEFAULT, rng),
            "config": rng.choice(["", "agent:\n  image_input_mode: txet\n", "[", "a: *b\n"]),
            "provider": rng.choice(["openrouter", "openroutr", "", "x" * 500, "../../etc"]),
            "model": rng.choice(["deepseek/deepseek-v3.2", "claude-sonet-4-5", "\x00"]),
            "baseline": rng.choice(["loaded", "other", "bundled:default", "bundled:../x", "/etc"]),
            "baseline_text": _mutated(DEFAULT, rng),
        }
    elif kind < 0.7:
        document = rng.choice([[], 3, None, "policy", {"policy": 3}, {"policy": ["a"]}, {}])
    else:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    return json.dumps(document).encode("utf-8")


def _headers(rng: random.Random, token: str, port: int) -> dict[str, str]:
    headers = {TOKEN_HEADER: token}
    if rng.random() < 0.1:
        headers[TOKEN_HEADER] = rng.choice(["", token[:-1], token + "x"])
    if rng.random() < 0.1:
        headers["Origin"] = rng.choice(["http://evil.example", "null", f"http://127.0.0.1:{port}"])
    if rng.random() < 0.05:
        headers["Host"] = rng.choice(["evil.example", f"localhost:{port}", ""])
    return headers


def _post(port: int, action: str, body: bytes, headers: dict[str, str]) -> tuple[int, object]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", f"/api/{action}", body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_fuzzed_requests_get_json_answers_and_the_page_keeps_working(
    served: tuple[Playground, int, Path],
) -> None:
    playground, port, policy = served
    before = policy.read_bytes()
    rng = random.Random(39)
    statuses: Counter[int] = Counter()
    for _ in range(CASES):
        action = rng.choice(ACTIONS)
        if action == "save" and rng.random() < 0.8:
            action = "analyze"  # saves that lint clean would rewrite the file: few of them
        status, answer = _post(port, action, _body(rng), _headers(rng, playground.token, port))
        assert status in STATUSES, (status, answer)
        assert isinstance(answer, dict)
        if status != 200 or "error" in answer:
            error = answer.get("error")
            assert isinstance(error, str) and error and "Traceback" not in error, answer
            assert not error.startswith("internal error"), answer
        statuses[status] += 1
    print(
        f"\nplayground fuzz: {CASES} requests, answers by status: {dict(sorted(statuses.items()))}"
    )
    status, answer = _post(
        port, "analyze", json.dumps({"policy": DEFAULT}).encode(), {TOKEN_HEADER: playground.token}
    )
    assert status == 200 and isinstance(answer, dict) and len(answer["cells"]) == 54
    assert statuses[200] > CASES // 4  # most mutated policies reached the worker
    # A save lints first: only a clean policy was written, and the file on disk still loads.
    from visiongate.engine.tooling.lint._check import lint_file

    if policy.read_bytes() != before:
        assert [d for d in lint_file(policy).diagnostics if d.severity == "error"] == []
