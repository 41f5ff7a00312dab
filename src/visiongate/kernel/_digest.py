"""SHA-256 without `hashlib`: the cache keys and checksums a command line computes at start-up.

`hashlib` loads OpenSSL's `libcrypto` when imported, ~3 ms of every `decide` (issue 37), for
a few digests of at most a few hundred kilobytes (the engine's fingerprint, a cached entry's
checksum). CPython's own implementation, which `hashlib` falls back to, gives the same digests
and loads in a tenth of that: `_sha2` from 3.12, `_sha256` in 3.11. An interpreter built
without it gets `hashlib`'s.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s (issue 37)
if TYPE_CHECKING:
    from hashlib import sha256 as sha256
else:
    try:
        from _sha2 import sha256  # CPython 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # CPython 3.11
        except ImportError:  # an interpreter without the built-in hashes
            from hashlib import sha256

__all__ = ["sha256"]
