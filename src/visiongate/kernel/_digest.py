"""SHA-256 and BLAKE2b without `hashlib`: the cache keys, checksums and fingerprints a command
line computes at start-up.

`hashlib` loads OpenSSL's `libcrypto` when imported, ~3 ms of every `decide` (issue 37), for
a few digests of at most a few hundred kilobytes. CPython's own implementations, which
`hashlib` falls back to (and, for BLAKE2, always uses), give the same digests and load in a
tenth of that: `_sha2` from 3.12, `_sha256` in 3.11, `_blake2`. An interpreter built without
them gets `hashlib`'s. BLAKE2b hashes the caches' fingerprints, the package's own modules
(~400 KB read at every start): it is four times as fast as the built-in SHA-256.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s (issue 37)
if TYPE_CHECKING:
    from hashlib import blake2b as blake2b
    from hashlib import sha256 as sha256
else:
    try:
        from _sha2 import sha256  # CPython 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # CPython 3.11
        except ImportError:  # an interpreter without the built-in hashes
            from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b

__all__ = ["blake2b", "sha256"]
