"""Keep the api key, and a backend's raw words, out of what the model and the trace read.

A vision endpoint sees the key in every request, and a hostile or buggy one can echo it back
in its answer or its error body: verbatim, split by spaces, upper-cased, hex-encoded, base64 or
base32 (of the key, of `Bearer <key>`, of a whole header dump), ROT13, in fullwidth or other
compatibility letters (`ｓｋ－…`, read as their NFKC forms), with its separators removed or
others put in (`sk-proj-…` as `skproj…`, or `s.k.p.r.o.j`), or reversed. `redact_key` removes every
run of 12 or more characters of the key, or of any of those encodings, wherever it stands,
case insensitively and across spaces and invisible characters; and every run of 12 or more of
its letters and digits, in order or reversed, with anything else between them (a second view
of the text that keeps only ASCII letters and digits): a fragment too short to be useful is all
that can survive. It is linear in the text (sets of 12-grams, not a regex alternation).

`summarize_error` turns an error body into what the model may read: the http status and a short
reason (the body's `error.message` when it has one), redacted, stripped of invisible and
control characters, on one line. The body itself is never copied.
"""

from __future__ import annotations

import base64
import codecs
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final
from urllib.parse import quote

from ..sanitize._line import untrusted_line
from ._base import one_line

__all__ = [
    "KEY_MARK",
    "REASON_CHARS",
    "error_message",
    "redact_key",
    "short_reason",
    "summarize_error",
]

KEY_MARK: Final = "(key)"
REASON_CHARS: Final = 120
"""Longest reason taken from an error body."""
_WINDOW: Final = 12
_MIN_ENCODED_KEY: Final = 8
"""Shorter keys are matched as themselves only: their encodings are too short to be safe."""
# Characters a key may be split by: whitespace and the invisible ones a sanitizer may keep.
_SPLITTERS: Final = frozenset(" \t\r\n\v\f\x85\xa0\u00ad\u180e\u200b\u200c\u200d\u2060\ufeff")
_EXTRACT_CHARS: Final = 2_000


@dataclass(frozen=True)
class _KeyGrams:
    grams: frozenset[str]
    width: int


def redact_key(text: str, key: str | None) -> str:
    """`text` with every fragment of `key`, its encodings, its letters and digits (in order
    or reversed, whatever stands between them) replaced by `(key)`."""
    if not key or not text:
        return text
    spans = _spans(_normalized(text), _key_grams(key))
    letters = _letter_grams(key)
    if letters is not None:
        spans += _spans(_letters_only(text), letters)
    return _replace_spans(text, sorted(spans)) if spans else text


def _spans(view: tuple[str, list[int]], found: _KeyGrams) -> list[tuple[int, int]]:
    kept, positions = view
    width = found.width
    return [
        (positions[start], positions[start + width - 1] + 1)
        for start in range(len(kept) - width + 1)
        if kept[start : start + width] in found.grams
    ]


def summarize_error(status: int, body: bytes, key: str | None) -> str:
    """`http <status>` and, when the body says why, `: <short reason>`; never the body."""
    reason = short_reason(_message_of(body), key)
    return f"http {status}: {reason}" if reason else f"http {status}"


def short_reason(message: str, key: str | None, limit: int = REASON_CHARS) -> str:
    """A server's message cut down to one short, redacted, visible line."""
    text = redact_key(message[:_EXTRACT_CHARS], key)
    # `one_line` redacts data URLs and long base64 runs; `untrusted_line` cleans the rest.
    return redact_key(untrusted_line(one_line(text, _EXTRACT_CHARS), limit), key)


def _message_of(body: bytes) -> str:
    """The body's `error.message` (or `message`, `detail`); a non-JSON body counts only when it
    is a short line of plain text (`Bad Gateway`), never an HTML page or an echo."""
    text = body.decode("utf-8", "replace")
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the stack
        short = text.strip()
        return short if len(short) <= REASON_CHARS and "<" not in short else ""
    return error_message(payload)


def error_message(payload: Any) -> str:
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("message", payload.get("detail", "")))
        if isinstance(error, dict):
            return str(error.get("message", ""))
        return str(error)
    return str(payload)


@lru_cache(maxsize=8)
def _key_grams(key: str) -> _KeyGrams:
    forms = _forms(key)
    width = min(_WINDOW, len(key))
    grams = {
        form[start : start + width]
        for form in forms
        if len(form) >= width
        for start in range(len(form) - width + 1)
    }
    return _KeyGrams(frozenset(grams), width)


@lru_cache(maxsize=8)
def _letter_grams(key: str) -> _KeyGrams | None:
    """12-grams of the key's ASCII letters and digits, and of them reversed (None for a key
    with fewer than `_MIN_ENCODED_KEY` of them: the plain view covers it)."""
    letters = _letters_only(key)[0]
    if len(letters) < _MIN_ENCODED_KEY:
        return None
    width = min(_WINDOW, len(letters))
    rot13 = codecs.encode(letters, "rot13")
    grams = {
        form[start : start + width]
        for form in (letters, letters[::-1], rot13, rot13[::-1])
        for start in range(len(form) - width + 1)
    }
    return _KeyGrams(frozenset(grams), width)


def _forms(key: str) -> set[str]:
    """The key and its common encodings, lower-cased and without splitters."""
    plain = "".join(char for char in key if char not in _SPLITTERS)
    forms = {plain, quote(plain, safe=""), codecs.encode(plain, "rot13")}
    raw = plain.encode("utf-8")
    if len(plain) >= _MIN_ENCODED_KEY:
        forms.add(raw.hex())
        # Base64 of any text that holds the key holds one of three cores, by its offset mod 3;
        # base32, one of five.
        for offset in range(3):
            core = _core(base64.b64encode, 6, raw, offset)
            forms |= {core, core.replace("+", "-").replace("/", "_")}
        forms |= {_core(base64.b32encode, 5, raw, offset) for offset in range(5)}
    return {form.lower() for form in forms if form}


def _core(encode: Callable[[bytes], bytes], bits: int, raw: bytes, offset: int) -> str:
    """The characters of `encode` (`bits` per character) fixed by `raw` alone when it starts
    `offset` bytes into a stream."""
    encoded = encode(bytes(offset) + raw).decode("ascii")
    first = -(-8 * offset // bits)
    last = (8 * (offset + len(raw))) // bits
    return encoded[first:last]


def _ascii(char: str) -> str:
    """`char` as the ASCII character it is a compatibility form of (fullwidth `ｓ` is `s`),
    else itself."""
    if char.isascii():
        return char
    folded = unicodedata.normalize("NFKC", char)
    return folded if len(folded) == 1 and folded.isascii() else char


def _normalized(text: str) -> tuple[str, list[int]]:
    """Lower-case ASCII text without splitters, and where each kept character was."""
    kept: list[str] = []
    positions: list[int] = []
    for index, char in enumerate(text):
        if char in _SPLITTERS:
            continue
        char = _ascii(char)
        kept.append(char.lower() if char.isascii() else "\0")
        positions.append(index)
    return "".join(kept), positions


def _letters_only(text: str) -> tuple[str, list[int]]:
    """Lower-case ASCII letters and digits of `text`, and where each was: every separator a
    transform may remove or add (`-`, `_`, `.`, spaces, any other character) is left out."""
    kept: list[str] = []
    positions: list[int] = []
    for index, char in enumerate(map(_ascii, text)):
        if char.isascii() and char.isalnum():
            kept.append(char.lower())
            positions.append(index)
    return "".join(kept), positions


def _replace_spans(text: str, spans: list[tuple[int, int]]) -> str:
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[str] = []
    last = 0
    for start, end in merged:
        pieces += (text[last:start], KEY_MARK)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)
