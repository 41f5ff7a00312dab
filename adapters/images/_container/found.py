"""What a walk of an image's container found (`Layout`), and the two findings every walk
reports alike: repeated extras named once, and bytes after the end of the image."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Layout", "after_end", "ceil_div", "unique"]


@dataclass(frozen=True)
class Layout:
    """What a walk of the container found besides one image's pixels."""

    extras: tuple[str, ...] = ()
    """Everything that is not needed to show one image, e.g. `12 bytes after the image`."""
    entropy_ends: tuple[int, ...] = ()
    """JPEG: offsets where each entropy-coded segment (a scan or a restart interval) ends."""
    verify_scans: bool = True
    """JPEG: whether a short scan could hide anywhere (progressive, restart intervals, ...)
    rather than only at the end of the image."""
    short: bool = False
    """The structure alone shows that pixel data are missing (JPEG restart intervals)."""

    @property
    def bare(self) -> bool:
        """Whether the bytes hold exactly one image and nothing else."""
        return not self.extras


def unique(extras: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(extras))


def after_end(data: bytes, end: int) -> list[str]:
    if end > len(data):
        return ["the image structure is cut short"]
    return [f"{len(data) - end} bytes after the end of the image"] if end < len(data) else []


def ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)
