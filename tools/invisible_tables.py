"""Generate `adapters/sanitize/_invisible_data.json` from the Unicode data files.

Run: python tools/invisible_tables.py UCD_DIR EMOJI_DIR IVD_FILE \
     > adapters/sanitize/_invisible_data.json

- UCD_DIR: a Unicode Character Database release (`DerivedCoreProperties.txt`, `PropList.txt`,
  `Scripts.txt`, `StandardizedVariants.txt`, `UnicodeData.txt`, `HangulSyllableType.txt`,
  `LineBreak.txt`, `emoji/emoji-variation-sequences.txt`, `extracted/DerivedJoiningType.txt`,
  `extracted/DerivedBidiClass.txt`, `extracted/DerivedCombiningClass.txt`);
- EMOJI_DIR: the emoji data of the same version (`emoji-test.txt`, `emoji-sequences.txt`);
- IVD_FILE: the Ideographic Variation Database's `IVD_Sequences.txt`.

Python's `unicodedata` has none of these properties, and its version follows the interpreter
(14.0 on 3.11), so the sanitizer reads this generated table instead (`_invisible_data.py`
loads it at import); the test
`tests/test_sanitize_invisible_data.py` checks it against the `regex` and `emoji` packages
installed. Every table is derived here, by a rule written next to it; nothing is typed by hand
except the one named list of zero-width characters (the standard has no property for them).
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

_LINE = re.compile(r"^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*([^#;]+?)\s*(?:[;#]|$)")


def _records(path: Path) -> Iterator[tuple[range, str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _LINE.match(line)
        if match:
            low = int(match[1], 16)
            high = int(match[2] or match[1], 16)
            yield range(low, high + 1), match[3].strip()


def _property(path: Path, value: str) -> set[int]:
    return {code for codes, name in _records(path) if name == value for code in codes}


def _values(path: Path) -> dict[int, str]:
    return {code: name for codes, name in _records(path) for code in codes}


def _version(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    found = re.search(r"-(\d+\.\d+\.\d+)\.txt", first)
    if not found:
        raise SystemExit(f"no version in the first line of {path}")
    return found[1]


def _ranges(codes: Iterable[int]) -> str:
    ordered = sorted(set(codes))
    parts: list[str] = []
    start = previous = -2
    for code in [*ordered, -1]:
        if code == previous + 1:
            previous = code
            continue
        if start >= 0:
            parts.append(f"{start:x}" if start == previous else f"{start:x}-{previous:x}")
        start = previous = code
    return " ".join(parts)


def _sequence(text: str) -> str:
    return " ".join(f"{ord(char):x}" for char in text)


def _wrapped(text: str, width: int = 86) -> list[str]:
    """`text` in lines of about `width` characters, each but the last ending in its space:
    joined without a separator, they are `text` again."""
    words = text.split(" ")
    lines: list[str] = []
    line = ""
    for word in words:
        if line and len(line) + len(word) + 1 > width:
            lines.append(line + " ")
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return lines


def _channels(ucd: Path) -> dict[str, set[int]]:
    """The six channels: a partition of Default_Ignorable_Code_Point, each by a stated rule."""
    ignorable = _property(ucd / "DerivedCoreProperties.txt", "Default_Ignorable_Code_Point")
    proplist = ucd / "PropList.txt"
    category = _values(ucd / "extracted" / "DerivedGeneralCategory.txt")
    line_break = _values(ucd / "LineBreak.txt")
    tags = {code for code in ignorable if 0xE0000 <= code <= 0xE007F}
    selectors = _property(proplist, "Variation_Selector") & ignorable
    bidi = _property(proplist, "Bidi_Control") & ignorable
    # Zero-width: the joiners (Join_Control), the spaces and joiners that break or glue words
    # without a width (Line_Break ZW or WJ) and the invisible operators (Other_Math, Cf).
    zero_width = (
        _property(proplist, "Join_Control")
        | {code for code in ignorable if line_break.get(code) in ("ZW", "WJ")}
        | {code for code in _property(proplist, "Other_Math") if category.get(code) == "Cf"}
    ) & ignorable
    # Fillers: ignorable code points that are letters (the Hangul fillers).
    fillers = {code for code in ignorable if category.get(code) == "Lo"}
    named = tags | selectors | bidi | zero_width | fillers
    if len(named) != len(tags) + len(selectors) + len(bidi) + len(zero_width) + len(fillers):
        raise SystemExit("the channels overlap")
    return {
        "tags": tags,
        "variation_selectors": selectors,
        "zero_width": zero_width,
        "bidi": bidi,
        "fillers": fillers,
        "other_ignorables": ignorable - named,
    }


def _contexts(ucd: Path, ignorable: set[int]) -> dict[str, str]:
    """Character classes the legitimate uses are judged by."""
    joining = _values(ucd / "extracted" / "DerivedJoiningType.txt")
    scripts = _values(ucd / "Scripts.txt")
    category = _values(ucd / "extracted" / "DerivedGeneralCategory.txt")
    bidi_class = _values(ucd / "extracted" / "DerivedBidiClass.txt")
    combining = _values(ucd / "extracted" / "DerivedCombiningClass.txt")
    hangul = _values(ucd / "HangulSyllableType.txt")
    # Scripts whose letters join (any Dual_Joining letter): Arabic, Syriac, N'Ko, Mongolian, ...
    joining_scripts = {scripts[code] for code, kind in joining.items() if kind == "D"}
    letters_and_marks = {code for code, kind in category.items() if kind[0] in "LM"}
    return {
        "joining_letters": _ranges(
            code for code in letters_and_marks if scripts.get(code) in joining_scripts
        ),
        "viramas": _ranges(code for code, value in combining.items() if value == "9"),
        # Visible strong right-to-left characters (RLM and ALM are R and AL, but invisible).
        "right_to_left": _ranges(
            code
            for code, value in bidi_class.items()
            if value in ("R", "AL") and code not in ignorable
        ),
        "letters": _ranges(code for code, kind in category.items() if kind[0] == "L"),
        "marks": _ranges(code for code, kind in category.items() if kind[0] == "M"),
        "hangul_leading": _ranges(code for code, value in hangul.items() if value == "L"),
        "hangul_vowel": _ranges(code for code, value in hangul.items() if value == "V"),
        "hangul_trailing": _ranges(code for code, value in hangul.items() if value == "T"),
        "mongolian": _ranges(code for code, name in scripts.items() if name == "Mongolian"),
    }


def _variations(ucd: Path, ivd: Path) -> tuple[str, str]:
    """Standardized (and emoji) variation sequences as `base:vs,vs`; IVD bases as `base:count`."""
    pairs: dict[int, set[int]] = defaultdict(set)
    for path in (ucd / "StandardizedVariants.txt", ucd / "emoji" / "emoji-variation-sequences.txt"):
        for line in path.read_text(encoding="utf-8").splitlines():
            fields = line.split("#")[0].split(";")[0].split()
            if len(fields) == 2:
                pairs[int(fields[0], 16)].add(int(fields[1], 16))
    standard = " ".join(
        f"{base:x}:" + ",".join(f"{vs:x}" for vs in sorted(selectors))
        for base, selectors in sorted(pairs.items())
    )
    ideographic: dict[int, set[int]] = defaultdict(set)
    for line in ivd.read_text(encoding="utf-8").splitlines():
        fields = line.split("#")[0].split(";")[0].split()
        if len(fields) == 2:
            ideographic[int(fields[0], 16)].add(int(fields[1], 16) - 0xE0100)
    for base, indexes in ideographic.items():
        # The IVD registers a base's selectors in order from VS17, so a count says it all.
        if indexes != set(range(len(indexes))):
            raise SystemExit(f"IVD selectors of {base:x} are not contiguous from VS17")
    counts = " ".join(f"{base:x}:{len(indexes)}" for base, indexes in sorted(ideographic.items()))
    return standard, counts


def _emoji(emoji_dir: Path) -> dict[str, str]:
    """RGI ZWJ sequences in every qualification emoji-test.txt lists; keycaps; tag sequences."""
    zwj: set[str] = set()
    for line in (emoji_dir / "emoji-test.txt").read_text(encoding="utf-8").splitlines():
        fields = line.split(";")[0].split()
        if "200D" in fields and "#" not in line.split(";")[0]:
            zwj.add("".join(chr(int(field, 16)) for field in fields))
    keycaps: set[int] = set()
    tag_sequences: list[str] = []
    for codes, kind in _sequence_records(emoji_dir / "emoji-sequences.txt"):
        if kind == "Emoji_Keycap_Sequence":
            keycaps.add(codes[0])
        elif kind == "RGI_Emoji_Tag_Sequence":
            tag_sequences.append("".join(chr(code - 0xE0000) for code in codes[1:-1]))
    elements = {ord(char) for sequence in zwj for char in sequence} - {0x200D, 0xFE0F}
    return {
        "zwj_sequences": " ".join(sorted(_sequence(text).replace(" ", ".") for text in zwj)),
        "zwj_elements": _ranges(elements),
        "keycap_bases": _ranges(keycaps),
        "tag_sequences": " ".join(sorted(tag_sequences)),
    }


def _sequence_records(path: Path) -> Iterator[tuple[list[int], str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        body = line.split("#")[0]
        if ";" not in body:
            continue
        codes, kind = body.split(";")[:2]
        if ".." not in codes:
            yield [int(code, 16) for code in codes.split()], kind.strip()


def _emoji_version(emoji_dir: Path) -> str:
    for line in (emoji_dir / "emoji-test.txt").read_text(encoding="utf-8").splitlines():
        found = re.match(r"# Version: (\S+)", line)
        if found:
            return found[1]
    raise SystemExit("no version in emoji-test.txt")


def _ivd_version(ivd: Path) -> str:
    found = re.search(r"\d{4}-\d{2}-\d{2}", ivd.read_text(encoding="utf-8")[:2000])
    if not found:
        raise SystemExit(f"no date in the header of {ivd}")
    return found[0]


def main(ucd: Path, emoji_dir: Path, ivd: Path) -> None:
    channels = _channels(ucd)
    ignorable = set().union(*channels.values())
    standard, ideographic = _variations(ucd, ivd)
    tables = {
        **{f"channel.{name}": _ranges(codes) for name, codes in channels.items()},
        **{f"context.{name}": ranges for name, ranges in _contexts(ucd, ignorable).items()},
        "variation.standardized": standard,
        "variation.ideographic": ideographic,
        **{f"emoji.{name}": text for name, text in _emoji(emoji_dir).items()},
    }
    data = {
        "unicode_version": _version(ucd / "DerivedCoreProperties.txt"),
        "emoji_version": _emoji_version(emoji_dir),
        "ivd_version": _ivd_version(ivd),
        "tables": {name: _wrapped(text) for name, text in tables.items()},
    }
    sys.stdout.write(json.dumps(data, indent=1, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
