"""`visiongate fmt`: one canonical layout that keeps comments, idempotent, like `opa fmt` and
`ruff format`; `--check` and `--diff` for CI, a pre-commit hook, lint suggesting it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from _cli_helpers import POLICIES, ROOT, run
from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.engine._load import analyze_policy_text
from visiongate.engine.tooling.fmt._format import FormatError, format_text

MESSY = """\
# a header comment that stays on top
version: 1.10   # the version, read by YAML as 1.1
policy: messy
hit_policy: first
description: a policy written in no particular order
# the rules, most specific first
rules:
  # text mode wins everything
  - lane: text
    id: text-mode     # the operator said so
    when:
      path: [unverified, refuses, accepts]
      mode: text
    reason: yes
  - id: rest
    reason: everything else keeps pixels out
    lane: text
default: text
sanitize:
  invisible:
    bidi: yes
    zero_width: off
"""

CANONICAL = """\
# a header comment that stays on top
policy: messy
version: "1.10" # the version, read by YAML as 1.1
description: a policy written in no particular order
hit_policy: first
default: text
# the rules, most specific first
rules:
  # text mode wins everything
  - id: text-mode     # the operator said so
    when: {mode: text, path: [accepts, refuses, unverified]}
    lane: text
    reason: 'yes'
  - id: rest
    lane: text
    reason: everything else keeps pixels out
sanitize:
  invisible:
    bidi: true
    zero_width: false
"""


def test_fmt_orders_keys_quotes_boolean_words_and_keeps_every_comment() -> None:
    assert format_text(MESSY, "messy.yaml") == CANONICAL


def test_the_formatted_policy_means_what_the_original_meant_to_the_loader() -> None:
    original, _ = analyze_policy_text(MESSY.replace("reason: yes", "reason: 'yes'"), "m.yaml")
    formatted, found = analyze_policy_text(CANONICAL, "m.yaml")
    assert original is not None and formatted is not None, found
    assert dict(original.table) == dict(formatted.table)
    assert formatted.policy.version == "1.10"  # the original read it as 1.1
    assert formatted.policy.sanitize.strip_bidi is True


REPOSITORY_FILES = sorted(
    [*POLICIES.glob("*.yaml"), *POLICIES.glob("examples/*.yaml")], key=lambda p: p.name
)


@pytest.mark.parametrize("path", [p for p in REPOSITORY_FILES if p.name != "providers.yaml"])
def test_the_repository_is_formatted_and_fmt_is_idempotent(path: Path) -> None:
    text = path.read_text()
    assert format_text(text, path.name) == text


def test_the_golden_table_stays_an_aligned_table() -> None:
    table = (POLICIES / "default.test.yaml").read_text()
    squeezed = re.sub(r", +", ", ", table)
    assert squeezed != table
    assert format_text(squeezed, "t.test.yaml") == table


@settings(max_examples=60, deadline=None)
@given(
    order=st.permutations(["policy", "version", "description", "hit_policy", "default", "rules"]),
    comment=st.sampled_from(["", "  # note", "\n# a comment line"]),
)
def test_fmt_is_idempotent_whatever_the_key_order(order: list[str], comment: str) -> None:
    values = {
        "policy": "p",
        "version": '"1"',
        "description": "d",
        "hit_policy": "unique",
        "default": "text" + comment,
        "rules": "\n  - {id: a, when: {mode: text}, lane: text, reason: r}",
    }
    text = "".join(f"{key}: {values[key]}\n" for key in order)
    once = format_text(text, "p.yaml")
    assert format_text(once, "p.yaml") == once
    assert once.index("policy:") < once.index("rules:")
    assert yaml.safe_load(once) == yaml.safe_load(text)


@pytest.mark.parametrize(
    "text,message",
    [
        ("policy: p\nversion: '1'\ndescription: d\nhit_policy: [x\n", "is not valid YAML"),
        (
            "policy: p\npolicy: q\nversion: '1'\ndescription: d\nhit_policy: first\n",
            "is not valid YAML",
        ),
    ],
)
def test_fmt_refuses_what_it_cannot_parse(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        format_text(text, "bad.yaml", "policy")


def test_fmt_check_diff_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messy = tmp_path / "messy.yaml"
    messy.write_text(MESSY)
    code, out, _err = run(capsys, "fmt", "--check", str(messy))
    assert code == 1 and "would reformat" in out and messy.read_text() == MESSY
    code, out, _err = run(capsys, "fmt", "--diff", str(messy))
    assert code == 1 and "-version: 1.10" in out and '+version: "1.10"' in out
    assert messy.read_text() == MESSY
    code, out, _err = run(capsys, "fmt", str(messy))
    assert code == 0 and messy.read_text() == CANONICAL
    assert run(capsys, "fmt", "--check", str(messy))[0] == 0


def test_fmt_of_broken_yaml_exits_3_and_leaves_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    text = "policy: p\nversion: '1'\ndescription: d\nhit_policy: first\nrules: [\n"
    broken.write_text(text)
    code, _out, err = run(capsys, "fmt", str(broken))
    assert code == 3 and "error[yaml-syntax]" in err and broken.read_text() == text


def test_fmt_of_a_named_file_that_is_no_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "compose.yaml"
    other.write_text("services:\n  web: {image: nginx}\n")
    code, _out, err = run(capsys, "fmt", str(other))
    assert code == 2 and "is not a policy or a policy test file" in err
    code, _out, _err = run(capsys, "fmt", "--policies-only", str(other))
    assert code == 0 and other.read_text() == "services:\n  web: {image: nginx}\n"


def test_the_repository_passes_fmt_check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _err = run(capsys, "fmt", "--check")
    assert code == 0, out
    files = [p for p in POLICIES.rglob("*.yaml") if p.name != "providers.yaml"]
    assert f"0 file(s) would be reformatted, {len(files)} left unchanged" in out


def test_lint_suggests_fmt_for_what_fmt_rewrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text((POLICIES / "default.yaml").read_text().replace('"3.0.0"', "3.0", 1))
    code, out, _err = run(capsys, "lint", str(policy))
    assert code == 0 and "warning[unquoted-version]" in out
    assert f"`visiongate fmt {policy}` rewrites" in out
