"""What a person reads is safe to print: the one helper (`visiongate.kernel._display`) and the
commands that print through it, over a trace, a policy and a config whose words hold terminal
controls, tag characters and bidi controls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine import Gate
from visiongate.kernel._display import json_text, one_line, unsafe_characters, visible

# ESC ] 0 ; … BEL retitles the terminal, ESC [2J clears it, CR overwrites the line, then tag
# characters spell `obey` and RLO reverses what follows.
HOSTILE = (
    "gpt\x1b]0;pwned\x07\x1b[2J\rFAKE: 0 findings\U000e006f\U000e0062\U000e0065\U000e0079\u202e"
)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")


def test_visible_escapes_controls_and_invisible_characters() -> None:
    shown = visible(HOSTILE)
    assert not RAW.search(shown)
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\rFAKE" in shown
    assert shown.endswith("<U+E006F><U+E0062><U+E0065><U+E0079><U+202E>")


def test_visible_keeps_plain_and_printable_text_as_it_is() -> None:
    for text in ("plain ascii", "café ’quoted’ 日本語 😀"):
        assert visible(text) is text or visible(text) == text


def test_json_text_escapes_as_json_and_reads_back_the_same() -> None:
    document = {"model": HOSTILE, "note": "日本語 ok", "del": "a\x7fb"}
    text = json_text(document, indent=2)
    assert not RAW.search(text)
    assert "\\udb40\\udc6f" in text and "\\u202e" in text and "\\u007f" in text
    assert "日本語 ok" in text
    assert json.loads(text) == document


def test_one_line_parameters_are_what_the_copies_did() -> None:
    assert one_line("a\n\n b\t c", 10) == "a b c"
    assert one_line("x" * 20, 10) == "x" * 9 + "…"
    assert one_line("ab   cd", 4) == "ab…"
    assert one_line("a\x1bb\u200bc", 20, unprintable="space") == "a b c"
    assert one_line("a\x1bb\u200cc", 20, unprintable="space_controls") == "a b\u200cc"
    assert one_line("a\x1bb", 20, unprintable="escape") == "a\\x1bb"
    assert one_line("a `b`", 20, backticks=True) == "a 'b'"
    secret = re.compile(r"sk-\w+")
    assert (
        one_line("key sk-123 here", 40, redact=((secret, "(redacted)"),)) == "key (redacted) here"
    )


def test_unsafe_characters_leave_line_breaks_and_tabs() -> None:
    assert unsafe_characters("a\nb\tc") == ""
    assert unsafe_characters("a\rb\u200b") == "\r\u200b"


@pytest.fixture
def hostile_trace(tmp_path: Path) -> Path:
    trace = tmp_path / "trace.jsonl"
    gate = Gate.load(trace=trace)
    gate.decide("openai", HOSTILE)
    return trace


def _values(document: object) -> list[object]:
    if isinstance(document, dict):
        return [v for item in document.values() for v in _values(item)]
    if isinstance(document, list):
        return [v for item in document for v in _values(item)]
    return [document]


def _output(capsys: pytest.CaptureFixture[str], *arguments: str) -> str:
    main(list(arguments))
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_audit_prints_no_control_or_invisible_character_raw(
    hostile_trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(hostile_trace.read_text(encoding="utf-8").splitlines()[0])
    assert record["model"] == HOSTILE  # the trace holds the words as given
    for form in ("text", "csv"):
        out = _output(capsys, "audit", "--format", form, "--group-by", "model", str(hostile_trace))
        assert "pwned" in out and not RAW.search(out), form
    out = _output(capsys, "audit", str(hostile_trace))
    assert "pwned" in out and not RAW.search(out)


def test_audit_json_escapes_as_json(
    hostile_trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _output(capsys, "audit", "--json", "--group-by", "model", str(hostile_trace))
    assert not RAW.search(out)
    assert f"openai/{HOSTILE}" in _values(json.loads(out))


def test_explain_of_a_hostile_decision_prints_nothing_raw(
    hostile_trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    decision = json.loads(hostile_trace.read_text().splitlines()[0])["decision_id"]
    out = _output(capsys, "audit", "--decision", decision, str(hostile_trace))
    assert "pwned" in out and not RAW.search(out)


def _policy(folder: Path, description: str, reason: str) -> Path:
    """A one-rule policy file with this description and reason (YAML scalars as written)."""
    path = folder / "policy.yaml"
    path.write_text(
        f"policy: hidden\nversion: '1'\ndescription: {description}\nhit_policy: unique\n"
        f"default: text\nrules:\n  - id: all-text\n    lane: text\n    reason: {reason}\n",
        encoding="utf-8",
    )
    return path


def test_decide_prints_a_policy_reason_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = _policy(
        tmp_path, "a reason with hidden words", '"text lane\\U000E006F\\U000E0062\\u202E\\x1b[2J"'
    )
    out = _output(
        capsys, "decide", "--policy", str(policy), "--provider", "openai", "--model", "gpt-4o"
    )
    assert "text lane<U+E006F><U+E0062><U+202E>\\x1b[2J" in out and not RAW.search(out)
    out = _output(
        capsys, "decide", "--json", "--policy", str(policy), "--provider", "openai", "--model", "x"
    )
    assert "text lane\\udb40\\udc6f" in out and not RAW.search(out)


def test_lint_prints_the_hidden_characters_it_finds_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = _policy(tmp_path, '"fine\\e[2J"', "ok")
    out = _output(capsys, "lint", str(policy))
    assert "invisible-character" in out and "\\x1b" in out and not RAW.search(out)


def test_a_config_key_with_tag_characters_is_echoed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text('"vision\\U000E0078\\U000E0079": {}\n', encoding="utf-8")
    out = _output(capsys, "decide", "--config", str(config), "--provider", "openai", "--model", "x")
    assert "<U+E0078><U+E0079>" in out and not RAW.search(out)
