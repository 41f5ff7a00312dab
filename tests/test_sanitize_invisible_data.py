"""The generated Unicode table against what is installed: the `regex` module's properties and
the `emoji` package's RGI sequences. A failure here means the table is older (or newer) than
the packages: regenerate it with tools/invisible_tables.py from the matching Unicode files."""

from __future__ import annotations

import functools
import sys

import emoji
import regex
from _invisible_payloads import DATA

from visiongate.adapters.sanitize import _invisible_data
from visiongate.adapters.sanitize._invisible import (
    channel_chars,
    emoji_zwj_sequences,
    table_codes,
)
from visiongate.engine._settings import INVISIBLE_CHANNELS, SanitizeSettings


@functools.cache
def _every_code_point() -> str:
    """Every code point once, at the index of its own value (lone surrogates included)."""
    return "".join(map(chr, range(sys.maxunicode + 1)))


def _property(name: str) -> set[int]:
    # One search of every code point, not a match per character: the same single-character
    # class, 30x faster.
    return {found.start() for found in regex.finditer(rf"\p{{{name}}}", _every_code_point())}


def _emoji_version() -> float:
    return float(_invisible_data.EMOJI_VERSION)


def test_the_channels_partition_default_ignorable_code_point() -> None:
    channels = [channel_chars(channel) for channel in INVISIBLE_CHANNELS]
    union = set().union(*channels)
    assert sum(len(codes) for codes in channels) == len(union)
    assert union == _property("Default_Ignorable_Code_Point")


def test_channels_follow_their_properties() -> None:
    assert channel_chars("variation_selectors") == _property("Variation_Selector")
    assert channel_chars("bidi") == _property("Bidi_Control")
    assert _property("Join_Control") <= channel_chars("zero_width")
    assert channel_chars("tags") == set(range(0xE0000, 0xE0080))
    assert all(chr(code).isalpha() for code in channel_chars("fillers"))


def test_contexts_follow_their_properties() -> None:
    assert table_codes("context.hangul_leading") == _property("Hangul_Syllable_Type=L")
    assert table_codes("context.hangul_vowel") == _property("Hangul_Syllable_Type=V")
    joining = _property("Joining_Type=Dual_Joining") & (_property("L") | _property("M"))
    assert joining <= table_codes("context.joining_letters")
    assert table_codes("context.viramas") == _property("Canonical_Combining_Class=Virama")


def _rgi(predicate: object) -> set[str]:
    version = _emoji_version()
    return {
        text
        for text, data in emoji.EMOJI_DATA.items()
        if data["E"] <= version and data["status"] != emoji.STATUS["component"] and predicate(text)  # type: ignore[operator]
    }


def test_emoji_zwj_sequences_are_the_emoji_packages() -> None:
    assert emoji_zwj_sequences() == _rgi(lambda text: "\u200d" in text)


def test_emoji_corpus_is_every_rgi_sequence_of_the_emoji_data() -> None:
    lines = [
        line.split("\t")
        for line in (DATA / "emoji-sequences.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    corpus = {text for _, text in lines}
    fully = emoji.STATUS["fully_qualified"]
    version = _emoji_version()

    def rgi(text: str) -> bool:
        data = emoji.EMOJI_DATA[text]
        return bool(data["status"] == fully and data["E"] <= version)

    wanted = {
        text
        for text in emoji.EMOJI_DATA
        if rgi(text)
        and ("\u200d" in text or "\u20e3" in text or "\U000e007f" in text or _regional(text))
    }
    assert corpus == wanted


def _regional(text: str) -> bool:
    return len(text) == 2 and all(0x1F1E6 <= ord(char) <= 0x1F1FF for char in text)


def test_default_flags_are_the_rgi_tag_sequences() -> None:
    tags = tuple(_invisible_data.TABLES["emoji.tag_sequences"].split())
    assert SanitizeSettings().allowed_flag_tags == tags


def test_keycap_bases_are_the_emoji_packages() -> None:
    keycaps = _rgi(lambda text: text.endswith("\u20e3"))
    assert {ord(text[0]) for text in keycaps} == table_codes("emoji.keycap_bases")


def test_table_names_its_sources() -> None:
    assert _invisible_data.UNICODE_VERSION.count(".") == 2
    assert _invisible_data.IVD_VERSION[:4].isdigit()
