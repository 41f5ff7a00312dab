"""Where users are: the core works without what only POSIX systems have (issue 29).

Many desktop MCP users run Windows. `_without_posix.py` hides from visiongate's own code what
Windows lacks (`fcntl`, `termios`, `resource`, `select.poll` and `select()` on pipes, `os`
and `signal` names), in a child interpreter and in every process it starts (the compile
worker too). There `decide`, `lint`, `route` and `audit` must work, and the fallbacks of
`visiongate/kernel/_platform.py` and the compile worker must be the ones taken. Each fallback
also has a test of its own here, on this machine's real system calls.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from visiongate.engine import _compile_worker
from visiongate.kernel import _platform
from visiongate.kernel._platform import PipeLines, exclusive

ROOT = Path(__file__).parent.parent
HIDER = Path(__file__).with_name("_without_posix.py")

SCENARIO = """
import json, sys
from pathlib import Path
from visiongate.cli import main
from visiongate.engine import Gate, JsonlTrace
from visiongate.engine._compile import _WORKER

work = Path(sys.argv[1])
codes = {}
codes["lint"] = main(["lint", "--strict", sys.argv[2]])
for command in (["explain"], ["fmt", "--check"], ["test"], ["docs", "--check"], ["rule", "gap"],
                ["registry", "show", "anthropic"], ["version"],
                ["diff", "default", "examples/never-pixels"]):
    codes[" ".join(command)] = main(command)
codes["decide"] = main(["decide", "--provider", "anthropic", "--model", "claude-sonnet-4-5"])
gate = Gate.load(trace=work / "trace.jsonl", routes=work / "routes.json")
before = gate.decide("anthropic", "claude-sonnet-4-5").facts["path"]
gate.report_refusal("anthropic", "claude-sonnet-4-5", "400: images are not allowed here")
after = gate.decide("anthropic", "claude-sonnet-4-5").facts["path"]
codes["route"] = main(["route", "--source", "computer_use", "--image", str(work / "shot.png"),
                       "--cache-dir", str(work / "cache"), "--out", str(work / "payload.json"),
                       *["--provider", "openai", "--model", "gpt-4o"]])
codes["route text"] = main(["route", "--source", "mcp", "--image", str(work / "shot.png"),
                            "--cache-dir", str(work / "cache"),
                            *["--provider", "deepseek", "--model", "deepseek-chat"]])
codes["routes list"] = main(["routes", "list"])
codes["audit"] = main(["audit", str(work / "trace.jsonl"), "--json"])
from visiongate.engine.tooling.audit import _parallel
_parallel.SPLIT_BYTES = 1  # split even this small file, were workers forked
codes["audit --jobs 2"] = main(["audit", str(work / "trace.jsonl"), "--jobs", "2"])
try:
    JsonlTrace(work / "rotated.jsonl", max_bytes=1000)
    rotation = "accepted"
except ValueError as error:
    rotation = str(error)
print(json.dumps({"codes": codes, "path": [before, after], "rotation": rotation,
                  "worker_rss": _WORKER.peak_rss_mb, "worker_started": _WORKER.started}))
"""


def _folder(package: str) -> str:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations is not None, package
    return str(spec.submodule_search_locations[0])


def _hidden_environment(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        textwrap.dedent(f"""
            import importlib.util
            spec = importlib.util.spec_from_file_location("_without_posix", {str(HIDER)!r})
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.install()
        """),
        encoding="utf-8",
    )
    # Where visiongate's modules load from: the checkout's folders, or the link tree an
    # editable install in `strict` mode makes of them.
    packages = ("visiongate", "visiongate.engine", "visiongate.adapters")
    roots = [_folder(package) for package in packages]
    return {
        **os.environ,
        "PYTHONPATH": str(site),
        "VISIONGATE_HIDE_ROOTS": os.pathsep.join(roots),
        "VISIONGATE_HIDE_LOG": str(tmp_path / "hidden.log"),
        "VISIONGATE_POLICY_CACHE": str(tmp_path / "policy-cache"),  # empty: a real compile
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
    }


def _screenshot(path: Path) -> None:
    image = Image.new("RGB", (320, 200), (240, 240, 240))
    for x in range(0, 320, 40):
        image.paste((20, 90, 200), (x, 40, x + 20, 160))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())


def test_decide_lint_route_and_audit_run_without_posix_only_modules(tmp_path: Path) -> None:
    """Regression: `engine/facts/_routes.py` imported `fcntl` at module level, so not even
    `import visiongate.engine.facts` worked on Windows; the compile worker read its answers
    with `select()` on a pipe, and measured its memory with `resource`."""
    work = tmp_path / "work"
    work.mkdir()
    _screenshot(work / "shot.png")
    done = subprocess.run(
        [sys.executable, "-c", SCENARIO, str(work), str(ROOT / "policies")],
        env=_hidden_environment(tmp_path),
        cwd=ROOT,  # the project: `fmt`, `test` and `docs` with no path use it
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    codes = dict.fromkeys(["lint", "explain", "fmt --check", "test", "docs --check", "rule gap"], 0)
    codes |= dict.fromkeys(["registry show anthropic", "version", "decide", "route"], 0)
    codes |= {"diff default examples/never-pixels": 1}  # lanes change: a finding
    codes |= dict.fromkeys(["route text", "routes list", "audit", "audit --jobs 2"], 0)
    assert report["codes"] == codes, done.stderr
    assert report["path"] == ["accepts", "refuses"]  # a learned refusal, written under the lock
    assert "needs POSIX file locks" in report["rotation"]
    # The worker ran (a fresh compile cache) and reported no memory figure: the fallback.
    assert report["worker_started"] == 1 and report["worker_rss"] == 0.0
    payload = json.loads((work / "payload.json").read_text(encoding="utf-8"))
    assert payload["api"] == "openai-responses" and "data:image/" in json.dumps(payload)
    asked = set((tmp_path / "hidden.log").read_text(encoding="utf-8").split("\n"))
    # The hiding worked where the code looks: each fallback was chosen, not skipped over.
    assert {"fcntl", "resource", "select.poll", "os.getuid", "os.setsid", "os.fork"} <= asked, asked
    assert "select.select on a pipe" not in asked
    assert list((work / "cache").glob("*.png"))  # the text lane's `MEDIA:` file


def test_the_hidden_environment_hides() -> None:
    # The stand-in must refuse what it claims to hide, or the test above proves nothing.
    site = HIDER.parent
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import _without_posix as h\n"
        "h._roots = (sys.argv[2],)\n"
        "g = {'__name__': 'visiongate.engine.x'}\n"
        "h.install()\n"
        "import builtins\n"
        "for name in ('fcntl', 'termios', 'resource'):\n"
        "    try: builtins.__import__(name, g); print('imported', name)\n"
        "    except ModuleNotFoundError: pass\n"
        "os = builtins.__import__('os', g); select = builtins.__import__('select', g)\n"
        "print(hasattr(os, 'getuid'), hasattr(select, 'poll'), hasattr(os, 'getpid'))\n"
        "import os as real; print(hasattr(real, 'getuid'))\n"
        "r, w = real.pipe()\n"
        "try: select.select([r], [], [], 0)\n"
        "except OSError as e: print(e.errno)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(site), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split("\n")[:3] == ["False False True", "True", "10038"], done.stdout


# -- each fallback on its own, with this machine's real system calls ------------------------


@pytest.mark.parametrize("threaded", [False, True], ids=["select", "thread"])
def test_pipe_lines_read_answers_end_and_time_out(threaded: bool) -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfor l in sys.stdin: print(l.strip()[::-1], flush=True)",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    lines = PipeLines(child.stdout, threaded=threaded)
    assert lines.threaded is threaded
    child.stdin.write(b"olleh\n")
    child.stdin.flush()
    assert lines.read_line(30) == b"hello\n"
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"no answer within 0\.2 s"):
        lines.read_line(0.2)
    assert time.monotonic() - started < 20
    child.stdin.close()
    assert lines.read_line(30) == b""  # the child exited
    child.wait(timeout=30)
    child.stdout.close()


def test_pipe_lines_choose_the_thread_where_select_takes_no_pipes() -> None:
    # select.poll exists exactly where select() takes pipes; here (Linux) it does.
    assert PipeLines(io.BytesIO()).threaded is False


@pytest.fixture
def lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A lock file path, locked as where there is no `fcntl` (waits of 0.3 s at most)."""
    monkeypatch.setattr(_platform, "fcntl", None)
    monkeypatch.setattr(_platform, "_WAIT", 0.3)
    return tmp_path / "routes.json.lock"


def test_the_lock_file_fallback_excludes_other_holders(lock: Path) -> None:
    owner = lock.with_name("routes.json.lock.owner")
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with exclusive(lock):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30) and owner.read_text().strip() == str(os.getpid())
    with pytest.raises(TimeoutError, match="another process holds the lock"), exclusive(lock):
        pass
    release.set()
    holder.join(30)
    assert not owner.exists()
    with exclusive(lock):  # free again
        assert owner.exists()


def test_the_lock_file_fallback_takes_over_a_dead_holders_lock(lock: Path) -> None:
    owner = lock.with_name("routes.json.lock.owner")
    owner.write_text("99999\n")  # a process that died holding it
    old = time.time() - _platform.STALE_AFTER - 5
    os.utime(owner, (old, old))
    with exclusive(lock):
        assert owner.read_text().strip() == str(os.getpid())
    assert not owner.exists()


def test_a_worker_that_cannot_measure_its_memory_retires_after_a_count(
    tmp_path: Path,
) -> None:
    environment = _hidden_environment(tmp_path)
    worker = subprocess.Popen(
        [sys.executable, "-P", _compile_worker.__file__, "1"],  # a 1 MiB budget: ignored
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=environment,
        text=True,
    )
    request = json.dumps({"rulesets": [], "facts": []}) + "\n"
    out, _err = worker.communicate(request * (_compile_worker.RETIRE_AFTER + 5), timeout=120)
    answers = [json.loads(line) for line in out.splitlines()]
    assert len(answers) == _compile_worker.RETIRE_AFTER  # it stopped reading, then exited
    assert [a["retire"] for a in answers] == [False] * (len(answers) - 1) + [True]
    assert {a["rss_mb"] for a in answers} == {0.0} and worker.returncode == 0
    assert "resource" in (tmp_path / "hidden.log").read_text(encoding="utf-8").split()


class _BrokenBuild:
    """A finder that fails `durable_rules_engine` as Python 3.13 fails a 2.0.28 build."""

    def find_spec(self, name: str, *_args: object) -> None:
        if name == "durable_rules_engine":
            raise ImportError("durable_rules_engine.so: undefined symbol: PyEval_CallObject")


def test_a_durable_rules_build_python_cannot_load_says_how_to_rebuild_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: on Python 3.13, `import visiongate.engine` died with an ImportError (the
    compile worker module imported durable-rules at its top, and the parent imports it)."""
    monkeypatch.delitem(sys.modules, "durable_rules_engine", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenBuild(), *sys.meta_path])
    request = {"rulesets": [{"name": "r", "rules": {}}], "facts": []}
    with pytest.raises(RuntimeError, match="PyEval_CallObject") as failure:
        _compile_worker.evaluate(request)
    assert _compile_worker.REBUILD in str(failure.value)
    assert "CPPFLAGS=-DPyEval_CallObject=PyObject_CallObject" in _compile_worker.REBUILD
