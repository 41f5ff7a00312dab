"""The C scanner (`_scanner.c`); `_scan.py` builds its table and reads its answer."""

def scan(text: str, table: bytes, /) -> tuple[str, tuple[tuple[int, int], ...]] | None:
    """`text` without the characters `table` strips, and (channel, count) pairs in the order
    each channel first showed; None at the first character `table` leaves to the walk."""
