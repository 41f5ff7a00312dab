"""The playground's answer to a keystroke pause, against `lint` of the same text in-process.

    python bench/bench_playground.py [--rounds N]

Each round edits the default policy (a comment changes, so no compile cache answers) and
measures, interleaved so a busy machine weighs on both alike:
- baseline: `lint_text` in this process, what `visiongate lint` does for one file once the
  interpreter is up;
- in-process analysis: the same lint plus the 54 cells and the diff against the file as
  loaded (`Analyst.analyze`, what the worker runs);
- the playground: `POST /api/analyze` over loopback HTTP to a running server, through its
  worker process, as the page sends it (the page adds its 40 ms pause detection and drawing,
  which `tests/test_playground_browser.py` measures in Chromium).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from visiongate.engine._load import bundled_policy_text
from visiongate.engine.tooling.lint._check import lint_text
from visiongate.playground import bind, open_playground
from visiongate.playground._analysis import Analyst
from visiongate.playground._server import TOKEN_HEADER

DEFAULT = bundled_policy_text("default")


def edited(round_number: int, kind: str) -> str:
    return DEFAULT.replace("fail closed", f"fail closed ({kind} {round_number})", 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    folder = Path(tempfile.mkdtemp(prefix="bench-playground-"))
    policy = folder / "default.yaml"
    policy.write_text(DEFAULT, encoding="utf-8")
    playground = open_playground(str(policy), None)
    server = bind(playground, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    analyst = Analyst()
    base = {"baseline_text": DEFAULT, "baseline_label": "as loaded"}
    timings: dict[str, list[float]] = {"lint": [], "analysis": [], "playground": []}
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for round_number in range(-2, rounds):  # two rounds of warm-up, not counted
            start = time.perf_counter()
            lint_text(edited(round_number, "lint"), "default.yaml")
            lint = time.perf_counter() - start
            start = time.perf_counter()
            analyst.analyze({"policy": edited(round_number, "analysis"), **base})
            analysis = time.perf_counter() - start
            body = json.dumps({"policy": edited(round_number, "page")}).encode()
            start = time.perf_counter()
            connection.request("POST", "/api/analyze", body, {TOKEN_HEADER: playground.token})
            answer = json.loads(connection.getresponse().read())
            served = time.perf_counter() - start
            assert len(answer["cells"]) == 54, answer
            if round_number >= 0:
                for name, value in (("lint", lint), ("analysis", analysis), ("playground", served)):
                    timings[name].append(value * 1000)
        connection.close()
    finally:
        server.shutdown()
        server.server_close()
        playground.close()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    baseline = statistics.median(timings["lint"])
    print(f"{rounds} rounds, load average {load:.2f}; medians (max):")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"  {name:<11} {median:7.1f} ms ({max(values):6.1f})  {median / baseline:5.2f}x lint")


if __name__ == "__main__":
    main()
