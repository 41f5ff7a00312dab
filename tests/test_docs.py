"""Generated policy pages are fresh and stable; every lint code has a page whose examples work."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine._load import load_policy
from visiongate.engine.tooling._discover import find_policies
from visiongate.engine.tooling._docs import (
    MARKER,
    DocPage,
    generate_pages,
    stale_pages,
    write_pages,
)
from visiongate.engine.tooling._project import find_project
from visiongate.engine.tooling.lint._check import lint_config, lint_text
from visiongate.engine.tooling.lint._codes import LINT_CODES, docs_path

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "policy_docs"


def test_docs_check_passes_on_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "--check", "--out", str(DOCS)]) == 0, capsys.readouterr().out


def project_pages() -> list[DocPage]:
    """The pages of this repository's policies, as `visiongate docs` finds them."""
    project = find_project(ROOT)
    return generate_pages(list(find_policies(project).files), project.root)


def test_generation_is_stable_and_free_of_dates() -> None:
    first, second = project_pages(), project_pages()
    pages = {
        "default.md",
        "examples/describe-mcp.md",
        "examples/native-needs-vision.md",
        "examples/never-pixels.md",
        "examples/strict-routes.md",
        "examples/trust-unknown-aliases.md",
    }
    # Each page has its grid picture beside it.
    pictures = {page.removesuffix(".md") + ".svg" for page in pages}
    assert {page.relative_path for page in first} == pages | pictures
    assert first == second
    for page in first:
        assert page.text.startswith(MARKER)
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b", page.text), page.relative_path


def test_the_default_page_shows_grid_rules_invariants_and_sha() -> None:
    page = next(p for p in project_pages() if p.relative_path == "default.md")
    compiled = load_policy("default")
    assert compiled.policy.sha256 in page.text
    assert compiled.policy.description in page.text
    grid = [
        line
        for line in page.text.splitlines()
        if line.startswith(("| auto |", "| native |", "| text |"))
    ]
    assert len(grid) == 9
    for rule in compiled.policy.rules:
        assert f"`{rule.id}` → {rule.lane}" in page.text
        assert rule.reason in page.text
    for invariant in compiled.policy.invariants:
        assert f"| `{invariant.id}` |" in page.text
    assert "| `mcp` | reference |" in page.text


def test_check_finds_stale_missing_and_orphaned_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    pages = project_pages()
    missing = [("missing", (tmp_path / p.relative_path).as_posix()) for p in pages]
    assert stale_pages(tmp_path, pages) == missing
    write_pages(tmp_path, pages)
    assert stale_pages(tmp_path, pages) == []
    target = tmp_path / "default.md"
    target.write_text(target.read_text().replace("text-mode", "text-mod", 1))
    (tmp_path / "gone.md").write_text(MARKER + "\n# Policy `gone`\n")
    (tmp_path / "hand-written.md").write_text("# notes\n")
    stale = stale_pages(tmp_path, pages)
    assert stale == [("stale", target.as_posix()), ("orphaned", (tmp_path / "gone.md").as_posix())]
    assert main(["docs", "--check", "--out", str(tmp_path)]) == 1
    assert main(["docs", "--out", str(tmp_path)]) == 0
    assert stale_pages(tmp_path, pages) == [stale[1]]  # regenerated; orphans are left to delete


# -- lint pages ------------------------------------------------------------------------------


def _section(text: str, title: str) -> tuple[str, str]:
    match = re.search(rf"## {title}\n\n```(\w+)\n(.*?)```", text, re.S)
    assert match, title
    return match.group(1), match.group(2)


@pytest.mark.parametrize("code", sorted(LINT_CODES))
def test_every_code_has_a_page_with_a_working_bad_and_good_example(
    code: str, tmp_path: Path
) -> None:
    page = ROOT / docs_path(code)
    assert page.is_file(), f"missing {page}"
    text = page.read_text()
    assert text.startswith(f"# `{code}`\n")
    for heading in ("## What it means", "## Why it matters", "## Bad", "## Good"):
        assert heading in text, heading
    assert f"**Level:** {LINT_CODES[code].severity}" in text
    bad_language, bad = _section(text, "Bad")
    good_language, good = _section(text, "Good")
    if bad_language != "yaml":
        return  # e.g. `unreadable-file`: shown as a terminal session
    if LINT_CODES[code].category == "config":  # the examples are agent configs
        (tmp_path / "bad.yaml").write_text(bad)
        (tmp_path / "good.yaml").write_text(good)
        assert code in {d.code for d in lint_config(tmp_path / "bad.yaml").diagnostics}
        assert good_language == "yaml" and lint_config(tmp_path / "good.yaml").diagnostics == ()
        return
    assert code in {d.code for d in lint_text(bad, "bad.yaml").diagnostics}
    good_findings = [
        d.render()
        for d in lint_text(good, "good.yaml").diagnostics
        if d.severity != "info" or d.code == code
    ]
    assert good_language == "yaml" and not good_findings


def test_no_page_without_a_code() -> None:
    pages = {p.stem for p in (DOCS / "lint").glob("*.md")}
    assert pages == set(LINT_CODES)


def test_reference_example_lints_clean_and_the_code_table_matches() -> None:
    text = (DOCS / "README.md").read_text()
    example = re.search(r"## A complete example\n\n```yaml\n(.*?)```", text, re.S)
    assert example
    assert lint_text(example.group(1), "example.yaml").diagnostics == ()
    for code, entry in LINT_CODES.items():
        assert f"(lint/{code}.md)" in text, code
        row = re.search(
            rf"\| \[`{re.escape(code)}`\]\(lint/{re.escape(code)}\.md\) \| (\w+) \|", text
        )
        if row:
            assert row.group(1) == entry.severity, code
