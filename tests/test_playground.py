"""`visiongate playground`'s server against what a hostile page or peer sends: every refusal is
clear, and the playground keeps answering the page afterwards.

The server runs in this process on a free loopback port, with its real worker process; the
requests are real HTTP (`http.client`). The page itself is driven in a browser by
`test_playground_browser.py`.
"""

from __future__ import annotations

import http.client
import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from visiongate.engine._load import bundled_policy_text
from visiongate.engine._vocabulary import FACTS
from visiongate.playground import Playground, bind, open_playground
from visiongate.playground._server import MAX_BODY_BYTES, TOKEN_HEADER

pytestmark = pytest.mark.slow  # a worker process per module, and policies of many rules

ROOT = Path(__file__).parent.parent
DEFAULT = bundled_policy_text("default")


@dataclass
class Served:
    playground: Playground
    port: int
    policy: Path

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def post(self, action: str, document: dict[str, str], **headers: str) -> tuple[int, Any]:
        sent = {TOKEN_HEADER: self.playground.token, "Content-Type": "application/json"}
        sent |= {name.replace("_", "-"): value for name, value in headers.items()}
        status, data = self.request("POST", f"/api/{action}", json.dumps(document).encode(), sent)
        return status, json.loads(data)


def serve(policy: Path) -> Iterator[Served]:
    playground = open_playground(str(policy), None)
    server = bind(playground, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(playground, server.server_address[1], policy)
    finally:
        server.shutdown()
        server.server_close()
        playground.close()
        thread.join(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("playground")
    for name in ("default.yaml", "default.test.yaml"):
        shutil.copy(ROOT / "policies" / name, folder / name)
    with pytest.MonkeyPatch.context() as patch:
        # The worker's image cache (the route's payload): not the machine's own.
        patch.setenv("VISIONGATE_CACHE_DIR", str(tmp_path_factory.mktemp("images")))
        yield from serve(folder / "default.yaml")


def test_the_default_policy_lints_clean_and_lays_out_54_cells(served: Served) -> None:
    status, answer = served.post("analyze", {"policy": DEFAULT})
    assert status == 200
    assert answer["lint"]["diagnostics"] == []
    assert len(answer["cells"]) == 54
    assert {c["change"] for c in answer["cells"]} == {""}  # as loaded: nothing changed


def test_a_huge_body_is_refused_unread(served: Served) -> None:
    headers = {TOKEN_HEADER: served.playground.token, "Content-Length": str(MAX_BODY_BYTES + 1)}
    status, data = served.request("POST", "/api/analyze", b"", headers)
    assert status == 413
    assert "more than the" in json.loads(data)["error"]
    assert served.post("analyze", {"policy": DEFAULT})[0] == 200


def test_a_body_within_the_bound_but_past_the_loader_limit_is_a_located_finding(
    served: Served,
) -> None:
    big = DEFAULT + "# " + "x" * (3 * 1024 * 1024) + "\n"
    status, answer = served.post("analyze", {"policy": big})
    assert status == 200
    assert answer["compiled"] is True or answer["lint"]["diagnostics"]


@pytest.mark.parametrize(
    ("name", "text", "code"),
    [
        ("deep", "rules: " + "[" * 20000 + "]" * 20000 + "\n", "yaml-syntax"),
        (
            "alias bomb",
            "a: &a [x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
                for i in range(8)
            ),
            "alias-expansion",
        ),
    ],
)
def test_hostile_yaml_gets_a_located_diagnostic(
    served: Served, name: str, text: str, code: str
) -> None:
    status, answer = served.post("analyze", {"policy": text})
    assert status == 200, name
    codes = {d["code"] for d in answer["lint"]["diagnostics"]}
    assert code in codes, (name, codes)
    assert all(d["line"] >= 1 for d in answer["lint"]["diagnostics"])
    assert answer["compiled"] is False
    assert served.post("analyze", {"policy": DEFAULT})[0] == 200


def test_a_wrong_or_missing_token_is_refused(served: Served) -> None:
    status, answer = served.post("analyze", {"policy": DEFAULT}, X_Playground_Token="nope")
    assert (status, answer["error"]) == (403, answer["error"])
    assert "token" in answer["error"]
    status, _ = served.request("POST", "/api/analyze", b"{}", {"Content-Length": "2"})
    assert status == 403
    status, page = served.request("GET", "/")
    assert status == 403 and b"token" in page
    status, page = served.request("GET", f"/?token={served.playground.token}")
    assert status == 200 and b"<title>visiongate playground</title>" in page


def test_a_foreign_origin_and_a_foreign_host_are_refused(served: Served) -> None:
    status, answer = served.post("analyze", {"policy": DEFAULT}, Origin="http://evil.example")
    assert status == 403 and "Origin `http://evil.example`" in answer["error"]
    status, answer = served.post("analyze", {"policy": DEFAULT}, Host="evil.example:80")
    assert status == 421 and "Host `evil.example:80`" in answer["error"]
    own = f"http://127.0.0.1:{served.port}"
    assert served.post("analyze", {"policy": DEFAULT}, Origin=own)[0] == 200


def test_a_body_that_is_not_an_object_of_strings_is_refused(served: Served) -> None:
    headers = {TOKEN_HEADER: served.playground.token}
    for body in (b"not json", b"[1, 2]", b'{"policy": 3}', b"\xff\xfe"):
        status, data = served.request("POST", "/api/analyze", body, headers)
        assert status == 400, body
        assert "JSON object of strings" in json.loads(data)["error"]


def test_no_path_from_the_page_is_opened(served: Served, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text(DEFAULT.replace("policy: default", "policy: secret"), encoding="utf-8")
    document = {"policy": DEFAULT, "baseline": str(secret), "file": str(secret)}
    status, answer = served.post("analyze", document)
    assert status == 200 and "secret" not in json.dumps(answer)
    status, _ = served.request("GET", f"/rule/..%2F..%2Fsecret?token={served.playground.token}")
    assert status == 404
    status, _ = served.request("GET", "/static/../_server.py")
    assert status == 403  # not a static file: the page's URL needs the token, and is not it


def test_a_policy_that_takes_too_long_is_cut_off_and_the_server_keeps_answering(
    served: Served,
) -> None:
    rules = "".join(
        f"  - id: rule-{i}\n    when: {{mode: text}}\n    lane: text\n    reason: r {i}\n"
        for i in range(3000)
    )
    slow = DEFAULT.split("rules:")[0] + "hit_policy: first\nrules:\n" + rules
    restarts = served.playground.worker.restarts
    served.playground.lint_seconds = 0.05
    try:
        status, answer = served.post("analyze", {"policy": slow})
    finally:
        served.playground.lint_seconds = 5.0
    assert status == 200
    assert answer["cut_off"] is True
    assert answer["error"] == "lint took longer than 0.05 s and was cut off"
    assert served.playground.worker.restarts == restarts + 1
    status, answer = served.post("analyze", {"policy": DEFAULT})
    assert status == 200 and len(answer["cells"]) == 54


def test_save_refuses_a_policy_with_errors_and_writes_nothing(served: Served) -> None:
    before = served.policy.read_bytes()
    broken = DEFAULT.replace("lane: native", "lane: nativ", 1)
    status, answer = served.post("save", {"policy": broken})
    assert status == 200
    assert answer["error"] == "not saved: the policy has 1 error(s)"
    assert served.policy.read_bytes() == before


def test_save_refuses_to_overwrite_a_file_changed_on_disk(tmp_path: Path) -> None:
    policy = tmp_path / "mine.yaml"
    policy.write_text(DEFAULT, encoding="utf-8")
    for served in serve(policy):
        policy.write_text(DEFAULT + "# someone else's line\n", encoding="utf-8")
        _status, answer = served.post("save", {"policy": DEFAULT})
        assert answer["conflict"] is True and "changed on disk" in answer["error"]
        assert policy.read_text(encoding="utf-8").endswith("# someone else's line\n")
        _status, answer = served.post("save", {"policy": DEFAULT, "overwrite": "yes"})
        assert answer["saved"] == served.playground.policy_label
        assert policy.read_text(encoding="utf-8") == answer["text"]


def test_without_a_policy_file_there_is_nothing_to_save_to() -> None:
    playground = open_playground(None, None)
    try:
        answer = playground.save({"policy": DEFAULT})
    finally:
        playground.close()
    assert answer == {"error": "nothing to save to: start the playground with --policy FILE"}


def test_a_rule_page_is_served_by_code_offline(served: Served) -> None:
    status, page = served.request("GET", f"/rule/unknown-lane?token={served.playground.token}")
    assert status == 200
    text = page.decode()
    assert "<h1><code>unknown-lane</code></h1>" in text
    assert 'href="/static/playground.css"' in text and "http" not in text.replace("http-", "")


def test_the_command_prints_its_address_serves_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    """`visiongate playground` as a real process: one line with the address (its token), the
    page answers there, and Ctrl-C (SIGINT to the whole process group, as a terminal sends
    it) ends it (130) with its worker, without a traceback from either."""
    import os
    import signal
    import subprocess
    import sys

    policy = tmp_path / "mine.yaml"
    policy.write_text(DEFAULT, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "visiongate", "playground", "--policy", str(policy)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(f"visiongate playground for {policy}: open http://127.0.0.1:")
        address = line.split("open ", 1)[1].strip()
        port = int(address.split(":")[2].split("/")[0])
        token = address.split("token=", 1)[1]
        served = Served(Playground(DEFAULT, "x"), port, policy)
        served.playground.close()  # only its token is used, to talk to the process
        served.playground.token = token
        status, answer = served.post("analyze", {"policy": DEFAULT})
        assert status == 200 and len(answer["cells"]) == 54
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(30) == 128 + signal.SIGINT
        _out, err = process.communicate(timeout=30)
        assert "stopped by SIGINT" in err and "Traceback" not in err
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def test_a_route_is_decided_as_decide_explain_and_shaped_as_route(served: Served) -> None:
    from visiongate.engine import Gate

    target = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
    status, answer = served.post("route", {"policy": DEFAULT, **target})
    assert status == 200, answer
    record = answer["decision"]
    cli = Gate.load(None, routes=False).decide("anthropic", "claude-sonnet-4-5", trace=False)
    assert (record["lane"], record["rule"], record["facts"]) == (cli.lane, cli.rule, cli.facts)
    assert record["provenance"] == cli.provenance
    assert [r["status"] for r in record["explanation"]].count("wins") == 1
    payload = answer["payload"]
    assert payload["summary"]["api"] == "anthropic" and payload["summary"]["images_sent"] == 1
    shown = json.dumps(payload["body"], ensure_ascii=False)
    assert "… (" in shown and "characters)" in shown  # the base64 is cut for reading
    # The config of the second tab takes part: text mode keeps the pixels out.
    config = "agent:\n  image_input_mode: text\n"
    _status, answer = served.post("route", {"policy": DEFAULT, "config": config, **target})
    assert answer["decision"]["lane"] == "text"
    assert answer["decision"]["provenance"]["mode"].startswith("config.yaml")
    assert answer["payload"]["summary"]["images_sent"] == 0


def test_a_misspelt_model_gets_the_clis_suggestion(served: Served) -> None:
    target = {"provider": "anthropic", "model": "claude-sonet-4-5"}
    _status, answer = served.post("route", {"policy": DEFAULT, **target})
    assert any("did you mean" in w for w in answer["decision"]["warnings"]), answer
    _status, answer = served.post("route", {"policy": DEFAULT, "provider": "", "model": ""})
    assert answer == {"error": "give a provider and a model"}


@pytest.mark.parametrize("baseline", ["bundled:examples/never-pixels", "other"])
def test_the_cells_are_compared_with_the_chosen_baseline_as_diff_does(
    served: Served, baseline: str
) -> None:
    from visiongate.engine._load import compile_policy_text
    from visiongate.engine.tooling._diff import diff_policies

    other = bundled_policy_text("examples/strict-routes")
    document = {"policy": DEFAULT, "baseline": baseline, "baseline_text": other}
    _status, answer = served.post("analyze", document)
    name = "examples/never-pixels" if baseline != "other" else "examples/strict-routes"
    diff = diff_policies(
        compile_policy_text(bundled_policy_text(name)), compile_policy_text(DEFAULT)
    )
    changed = {c["cell"] for c in answer["cells"] if c["change"] == "lane"}
    assert changed == {
        ",".join(f"{k}={v}" for k, v in zip(FACTS, c.cell, strict=True)) for c in diff.lane_changes
    }
    assert changed and answer["diff"]["lane_changes"] == len(diff.lane_changes)
    assert answer["diff"]["summary"] == diff.summary()
    rules = {c["cell"] for c in answer["cells"] if c["change"] == "rule"}
    assert len(rules) == len(diff.rule_changes)


def test_the_bundled_default_is_read_only_and_its_tests_run_beside_it() -> None:
    playground = open_playground(None, None)
    try:
        assert playground.save_path is None and playground.policy_label == "policies/default.yaml"
        answer = playground.tests({"policy": DEFAULT})
    finally:
        playground.close()
    (tested,) = answer["files"]
    assert tested["file"] == "default.test.yaml" and tested["problems"] == []
    assert {case["status"] for case in tested["cases"]} == {"pass"}
    assert answer["uncovered"] == []


def test_the_diagnostics_are_lints_with_the_projects_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page shows what `visiongate lint FILE` prints as JSON in the same folder, the
    project's `[tool.visiongate.lint]` levels included."""
    from visiongate.cli import main

    (tmp_path / "pyproject.toml").write_text(
        '[tool.visiongate.lint]\nseverity = { contractible = "error" }\n', encoding="utf-8"
    )
    text = "".join(line for line in DEFAULT.splitlines(True) if "ignore[contractible]" not in line)
    (tmp_path / "mine.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--json", "mine.yaml"]) == 1
    expected = json.loads(capsys.readouterr().out)["files"][0]["diagnostics"]
    for served in serve(tmp_path / "mine.yaml"):
        _status, answer = served.post("analyze", {"policy": text})
        assert answer["lint"]["diagnostics"] == expected
        assert [d["severity"] for d in expected if d["code"] == "contractible"] == ["error"]
        _status, answer = served.post("save", {"policy": text})
        assert answer["error"].startswith("not saved: the policy has 1 error(s)")


def test_the_config_tab_is_linted_and_named_as_its_file(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agent:\n  image_input_mode: txet\n", encoding="utf-8")
    playground = open_playground(None, str(config))
    try:
        state = playground.state()
        answer = playground.analyze({"policy": DEFAULT, "config": state["config"]})
    finally:
        playground.close()
    assert state["config"] == config.read_text(encoding="utf-8")
    (found,) = [d for d in answer["config"]["diagnostics"] if d["severity"] == "error"]
    assert (found["file"], found["line"]) == (playground.config_label, 2)
    assert "did you mean `text`?" in found["message"] + found["help"]
