"""A lint code's documentation page (`visiongate rule CODE`'s text) as a small HTML page.

Only the Markdown the pages use is drawn: headings, paragraphs, fenced code, lists and
inline code; everything else is text, escaped.
"""

from __future__ import annotations

import html
import re
from importlib import resources

_INLINE_CODE = re.compile(r"`([^`]+)`")


def rule_page(code: str, token: str) -> str | None:
    """The page of `code`, or None when it is not a lint code (no file is looked up by name)."""
    from visiongate.engine.tooling.lint._codes import LINT_CODES

    if code not in LINT_CODES:
        return None
    source = resources.files("visiongate.policy_docs") / "lint" / f"{code}.md"
    try:
        text = source.read_text(encoding="utf-8")
    except OSError:
        text = f"# {code}\n\n{LINT_CODES[code].summary}\n"
    back = f'<p><a href="/?token={html.escape(token)}">back to the playground</a></p>'
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(code)}: visiongate lint code</title>"
        '<link rel="stylesheet" href="/static/playground.css"></head>'
        f'<body class="rule-page"><main>{back}{markdown(text)}</main></body></html>'
    )


def _inline(text: str) -> str:
    return _INLINE_CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text, quote=False))


def markdown(text: str) -> str:
    """The little Markdown of the rule pages as HTML."""
    out: list[str] = []
    paragraph: list[str] = []
    fence: list[str] | None = None

    def flush() -> None:
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()

    for line in text.splitlines():
        if fence is not None:
            if line.startswith("```"):
                out.append(f"<pre><code>{html.escape(chr(10).join(fence))}</code></pre>")
                fence = None
            else:
                fence.append(line)
        elif line.startswith("```"):
            flush()
            fence = []
        elif line.startswith("#"):
            flush()
            level = min(len(line) - len(line.lstrip("#")), 4)
            out.append(f"<h{level}>{_inline(line.lstrip('#').strip())}</h{level}>")
        elif line.lstrip().startswith(("- ", "* ")):
            flush()
            out.append(f"<ul><li>{_inline(line.lstrip()[2:])}</li></ul>")
        elif not line.strip():
            flush()
        else:
            paragraph.append(line.strip())
    flush()
    if fence is not None:
        out.append(f"<pre><code>{html.escape(chr(10).join(fence))}</code></pre>")
    return "\n".join(out)
