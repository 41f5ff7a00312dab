"""The probe's evidence: a random code, rendered as large dark text on a light PNG.

The alphabet leaves out characters that read alike (0/O/Q, 1/I/L, 2/Z, 5/S, 8/B, G/6), so a
model, or the OCR in the tests, reads back exactly what was drawn or nothing.
"""

from __future__ import annotations

import io
import secrets
from typing import Final

from PIL import Image, ImageDraw, ImageFont

__all__ = ["ALPHABET", "code_image", "normalized", "random_code"]

ALPHABET: Final = "ACDEFHJKMNPRTUVWXY34679"
CODE_LENGTH: Final = 6
_FONT_SIZE: Final = 72
_FONTS: Final = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
)


def random_code() -> str:
    """Six characters from `ALPHABET`, from the system's random source."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalized(text: str) -> str:
    """Upper-case letters and digits only, so `k7q-x4m` and `K7QX4M` compare equal."""
    return "".join(character for character in text.upper() if character.isalnum())


def code_image(code: str) -> bytes:
    """`code` as a PNG: one unspaced word, large, black on white, with a margin around it.

    Unspaced: with a space between characters the local OCR split the word into boxes and
    dropped about one code in a hundred (6 of 600 seeded codes); unspaced it read 600 of 600.
    """
    font = _font()
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    left, top, right, bottom = (round(v) for v in probe.textbbox((0, 0), code, font=font))
    margin = 40
    image = Image.new("RGB", (right - left + 2 * margin, bottom - top + 2 * margin), "white")
    ImageDraw.Draw(image).text((margin - left, margin - top), code, font=font, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for candidate in _FONTS:
        try:
            return ImageFont.truetype(candidate, _FONT_SIZE)
        except OSError:
            # Not on this system: Pillow's own scalable font below draws the same characters.
            continue
    return ImageFont.load_default(size=_FONT_SIZE)
