"""What the gateway checks before anything reaches a session, as the MCP specification asks of a
Streamable HTTP server (Transports, "Security Warning"; Security Best Practices, "Session
Hijacking"):

- **Origin**: a request that carries an `Origin` header is refused (403) unless the origin is
  allowed (`--allow-origin`), so a web page cannot reach the gateway through DNS rebinding.
  Patterns are the SDK's (`TransportSecuritySettings`): an exact origin, or
  `scheme://host:*` for any port. A request without `Origin` (not from a browser) passes.
- **Host**: on a loopback address the `Host` header must name a loopback host (421 otherwise),
  the other half of DNS rebinding protection; `--allow-host` adds names (a proxy's).
- **Authentication**: with `--token-env NAME` every request to the MCP endpoint and to
  `/metrics` carries `Authorization: Bearer <token>`, compared in constant time; the token is
  never logged nor recorded. The gateway refuses to listen on an address other than loopback
  without one.
- **Sessions bound to their credentials**: a session answers only requests that present the
  same credentials it was opened with (the `Authorization` header and every `--forward-header`),
  compared as a digest; to anyone else the session does not exist (404), exactly as an unknown
  id. Session ids are 128 random bits.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "LOOPBACK_HOSTS",
    "Checks",
    "is_loopback",
    "owner_digest",
    "pattern_allows",
]

LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
"""The `Host` values a loopback listener answers by default (the SDK's own defaults)."""


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def pattern_allows(patterns: Iterable[str], value: str) -> bool:
    """Whether `value` is one of `patterns`: exact, or `base:*` for `base` with any port."""
    for pattern in patterns:
        if value == pattern:
            return True
        base = pattern[:-1] if pattern.endswith(":*") else None
        if base is not None and value.startswith(base) and value[len(base) :].isdigit():
            return True
    return False


@dataclass(frozen=True)
class Checks:
    """The front door's checks, from the command line."""

    token: bytes | None
    origins: tuple[str, ...]
    hosts: tuple[str, ...] | None
    """Allowed `Host` values; None: any (a non-loopback listener without `--allow-host`)."""

    @classmethod
    def build(
        cls,
        listen_host: str,
        token: str | None,
        origins: Sequence[str],
        hosts: Sequence[str],
    ) -> Checks:
        allowed: tuple[str, ...] | None = tuple(hosts) or None
        if is_loopback(listen_host):
            allowed = (*LOOPBACK_HOSTS, *hosts)
        return cls(token.encode() if token else None, tuple(origins), allowed)

    def origin_problem(self, origin: str | None) -> str | None:
        if origin is None or pattern_allows(self.origins, origin):
            return None
        return f"the Origin `{origin}` is not allowed here (--allow-origin)"

    def host_problem(self, host: str | None) -> str | None:
        if self.hosts is None:
            return None
        if host is not None and pattern_allows(self.hosts, host.lower()):
            return None
        return f"the Host `{host or ''}` is not one this gateway answers (--allow-host)"

    def authorized(self, authorization: str | None) -> bool:
        """Whether the `Authorization` header carries the token (always, without one)."""
        if self.token is None:
            return True
        scheme, _, presented = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(presented.strip().encode(), self.token)


def owner_digest(headers: Mapping[str, str], forwarded: Sequence[str]) -> bytes:
    """A digest of the credentials a request presents: its `Authorization` header and the
    headers forwarded to the server. Only the digest is kept, never the values."""
    digest = hashlib.sha256()
    for name in ("authorization", *forwarded):
        value = headers.get(name)
        digest.update(b"\x00" if value is None else b"\x01" + value.encode("latin-1") + b"\x00")
    return digest.digest()
