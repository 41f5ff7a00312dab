"""Repairs every PNG decoder makes but Pillow does not: drop ancillary chunks with a bad CRC.

libpng's default for a CRC error in an ancillary chunk (one whose type starts with a lower-case
letter: `iCCP`, `tEXt`, `eXIf`, ...) is to warn and discard the chunk; browsers do the same.
Pillow refuses the whole file instead, so an image every viewer shows would be refused as
corrupt. Real servers send such files: the MCP reference server's `get-tiny-image` returns a
PNG whose `iCCP` chunk has a wrong CRC. A bad CRC in a critical chunk (`IHDR`, `IDAT`, ...)
is left alone, and the decoder refuses the image as it should.

Text chunks (`tEXt`, `zTXt`, `iTXt`) are dropped the same way before decoding: no decoder
needs them for the pixels, the stage never writes them, and Pillow refuses a whole image
whose compressed text inflates past its limit (a text bomb is not a reason to lose the image).
"""

from __future__ import annotations

import struct
import zlib
from typing import Final

__all__ = ["drop_corrupt_ancillary_chunks", "drop_unused_chunks"]

PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
_ANCILLARY_BIT: Final = 0x20
_CHUNK_OVERHEAD: Final = 12  # length, type, CRC
_TEXT_CHUNKS: Final = frozenset({b"tEXt", b"zTXt", b"iTXt"})


def drop_corrupt_ancillary_chunks(data: bytes) -> bytes:
    """`data` without the ancillary chunks whose CRC is wrong; the same object if none is.

    Anything that does not parse as a chunk sequence is returned unchanged, for the decoder
    to judge.
    """
    return _drop_chunks(data, text=False)


def drop_unused_chunks(data: bytes) -> bytes:
    """`data` without corrupt ancillary chunks and text chunks; the same object if none is."""
    return _drop_chunks(data, text=True)


def _drop_chunks(data: bytes, *, text: bool) -> bytes:
    if not data.startswith(PNG_SIGNATURE):
        return data
    kept: list[bytes] = [PNG_SIGNATURE]
    position = len(PNG_SIGNATURE)
    dropped = False
    while position + _CHUNK_OVERHEAD <= len(data):
        (length,) = struct.unpack_from(">I", data, position)
        end = position + _CHUNK_OVERHEAD + length
        if end > len(data):
            break
        chunk = data[position:end]
        if _is_ancillary(chunk) and (
            (text and chunk[4:8] in _TEXT_CHUNKS) or not _crc_ok(chunk, length)
        ):
            dropped = True
        else:
            kept.append(chunk)
        position = end
    if not dropped:
        return data
    kept.append(data[position:])
    return b"".join(kept)


def _is_ancillary(chunk: bytes) -> bool:
    return bool(chunk[4] & _ANCILLARY_BIT)


def _crc_ok(chunk: bytes, length: int) -> bool:
    stored: int = struct.unpack_from(">I", chunk, 8 + length)[0]
    return zlib.crc32(chunk[4 : 8 + length]) & 0xFFFFFFFF == stored
