"""The encoders hostile servers hide instructions with, each with the decoder that reads them
back: the corpus tests round-trip every encoder, then check that after sanitizing no decoder
finds a single byte.

- `tags`: ASCII as tag characters (U+E0000 + code), bare or framed as a flag (🏴 … U+E007F);
- `variation_selectors`: any bytes as selectors after one visible character (0–15: VS1–VS16,
  16–255: VS17–VS256), the scheme that survives most sanitizers;
- `zero_width`: bits as ZWSP/ZWNJ, bytes framed by ZWJ, the whole by BOMs; and base 4 over
  ZWSP, ZWNJ, ZWJ, WORD JOINER;
- `bidi`: three bits per control over the embeddings, overrides and isolates; and Trojan
  Source, text reversed inside RIGHT-TO-LEFT OVERRIDE … POP DIRECTIONAL FORMATTING;
- `fillers`: bits as the two Hangul compatibility fillers (a blank "name");
- `mixed`: an instruction cut in pieces, each hidden by another encoder.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Final

DATA: Final = Path(__file__).parent / "data" / "invisible"
INSTRUCTIONS: Final = [
    line
    for line in (DATA / "instructions.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]

_BIDI: Final = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068"
_BASE4: Final = "\u200b\u200c\u200d\u2060"
_FILLERS: Final = "\u3164\uffa0"
_RLO, _PDF = "\u202e", "\u202c"


def tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(char)) for char in text)


def flag_framed_tags(text: str) -> str:
    return "\U0001f3f4" + tags(text) + "\U000e007f"


def decode_tags(text: str) -> bytes:
    return bytes(ord(c) - 0xE0000 for c in text if 0xE0001 <= ord(c) <= 0xE007E)


def variation_selectors(text: str) -> str:
    def selector(byte: int) -> str:
        return chr(0xFE00 + byte) if byte < 16 else chr(0xE0100 + byte - 16)

    return "\U0001f600" + "".join(selector(byte) for byte in text.encode())


def decode_variation_selectors(text: str) -> bytes:
    found = []
    for char in text:
        code = ord(char)
        if 0xFE00 <= code <= 0xFE0F:
            found.append(code - 0xFE00)
        elif 0xE0100 <= code <= 0xE01EF:
            found.append(code - 0xE0100 + 16)
    return bytes(found)


def zero_width_binary(text: str) -> str:
    octets = (
        "".join("\u200b" if bit == "0" else "\u200c" for bit in f"{b:08b}") for b in text.encode()
    )
    return "\ufeff" + "\u200d".join(octets) + "\ufeff"


def decode_zero_width_binary(text: str) -> bytes:
    bits = "".join("0" if c == "\u200b" else "1" for c in text if c in "\u200b\u200c")
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8))


def zero_width_base4(text: str) -> str:
    return "".join(_BASE4[(b >> shift) & 3] for b in text.encode() for shift in (6, 4, 2, 0))


def decode_zero_width_base4(text: str) -> bytes:
    digits = [_BASE4.index(c) for c in text if c in _BASE4]
    return bytes(
        (digits[i] << 6) | (digits[i + 1] << 4) | (digits[i + 2] << 2) | digits[i + 3]
        for i in range(0, len(digits) - 3, 4)
    )


def bidi_octal(text: str) -> str:
    bits = "".join(f"{b:08b}" for b in text.encode())
    bits += "0" * (-len(bits) % 3)
    return "".join(_BIDI[int(bits[i : i + 3], 2)] for i in range(0, len(bits), 3))


def decode_bidi_octal(text: str) -> bytes:
    bits = "".join(f"{_BIDI.index(c):03b}" for c in text if c in _BIDI)
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8))


def trojan_source(text: str) -> str:
    return _RLO + text[::-1] + _PDF


def decode_trojan_source(text: str) -> bytes:
    found = []
    start = text.find(_RLO)
    while start != -1:
        end = text.find(_PDF, start)
        found.append(text[start + 1 : end if end != -1 else len(text)][::-1])
        start = text.find(_RLO, start + 1)
    return "".join(found).encode()


def fillers(text: str) -> str:
    return "".join(_FILLERS[int(bit)] for b in text.encode() for bit in f"{b:08b}")


def decode_fillers(text: str) -> bytes:
    bits = "".join(str(_FILLERS.index(c)) for c in text if c in _FILLERS)
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8))


Encoder = Callable[[str], str]
Decoder = Callable[[str], bytes]
ENCODERS: Final[dict[str, tuple[Encoder, Decoder]]] = {
    "tags": (tags, decode_tags),
    "flag_framed_tags": (flag_framed_tags, decode_tags),
    "variation_selectors": (variation_selectors, decode_variation_selectors),
    "zero_width_binary": (zero_width_binary, decode_zero_width_binary),
    "zero_width_base4": (zero_width_base4, decode_zero_width_base4),
    "bidi_octal": (bidi_octal, decode_bidi_octal),
    "trojan_source": (trojan_source, decode_trojan_source),
    "fillers": (fillers, decode_fillers),
}


def mixed(text: str, seed: int) -> str:
    """`text` cut into pieces of 4–12 characters, each hidden by an encoder picked at random
    (Trojan Source aside: its payload is visible once the override is gone)."""
    rng = random.Random(seed)
    names = [name for name in ENCODERS if name != "trojan_source"]
    pieces = []
    index = 0
    while index < len(text):
        size = rng.randint(4, 12)
        pieces.append(ENCODERS[rng.choice(names)][0](text[index : index + size]))
        index += size
    return "".join(pieces)


def decodable(text: str) -> dict[str, bytes]:
    """What each decoder finds in `text` (only the ones that find something)."""
    found = {name: decode(text) for name, (_, decode) in ENCODERS.items()}
    return {name: data for name, data in found.items() if data}


def invisible_part(encoded: str) -> str:
    """The characters of an encoding a person does not see (the carrier emoji dropped)."""
    return encoded[1:] if encoded.startswith(("\U0001f600", "\U0001f3f4")) else encoded
