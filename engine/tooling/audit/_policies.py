"""Is the policy a record names still the one in force? Compared by content (sha256).

- A bundled policy (`policy.bundled`) is compared with the same bundled policy of the
  installed package, never with a file of the current directory: an audit run inside any
  repository gives the same answer. Records from another package version are not compared
  (a new release may change its bundled policies); that is said, not flagged.
- A policy file is compared with the file at its recorded (absolute) path.
- Records written before policies were recorded as bundled name them `policies/<name>.yaml`:
  such a record is current if it matches either the bundled policy or that relative file.
- `--policy FILE` compares every record with that file instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from visiongate.kernel._files import read_regular_file

from ..._decision import package_version
from ..._load import bundled_policy_text, is_bundled_policy
from ..._policy import source_sha256
from ..._yaml import DEFAULT_LIMITS
from ._read import PolicyKey


class Standing(Enum):
    CURRENT = "current"
    STALE = "stale"
    """Decided under a content other than the policy's current one: a finding."""
    NOT_FOUND = "not-found"
    OTHER_RELEASE = "other-release"


@dataclass(frozen=True)
class PolicyStatus:
    standing: Standing
    current_sha256: str | None
    compared_with: str
    """What the record was compared with: a file, or `bundled default (visiongate 0.1.0)`."""


FileSha = Callable[[str], str | None]


def policy_status(
    policy: PolicyKey, override: str | None = None, file_sha: FileSha | None = None
) -> PolicyStatus:
    """How the policy a record names stands now; `file_sha` reads a file's sha256 (pass a
    memoized one to read each file once per audit)."""
    read = file_sha or file_sha256
    if override is not None:
        return _against_file(policy, Path(override), read)
    if policy.bundled is not None:
        return _against_bundled(policy, policy.bundled, policy.package_version)
    path = policy.path or ""
    legacy = _legacy_bundled_name(path)
    if legacy is None:
        return _against_file(policy, Path(path), read)
    bundled = _against_bundled(policy, legacy, None)
    if bundled.standing is Standing.CURRENT or not Path(path).is_file():
        return bundled
    return _against_file(policy, Path(path), read)


def _against_file(policy: PolicyKey, path: Path, read: FileSha) -> PolicyStatus:
    sha = read(str(path))
    if sha is None:
        return PolicyStatus(Standing.NOT_FOUND, None, path.as_posix())
    standing = Standing.CURRENT if sha == policy.sha256 else Standing.STALE
    return PolicyStatus(standing, sha, path.as_posix())


def _against_bundled(policy: PolicyKey, name: str, recorded_release: str | None) -> PolicyStatus:
    installed = package_version()
    label = f"bundled {name} (visiongate {installed})"
    if not is_bundled_policy(name):
        return PolicyStatus(Standing.NOT_FOUND, None, f"bundled {name}")
    sha = source_sha256(bundled_policy_text(name))
    if sha == policy.sha256:
        return PolicyStatus(Standing.CURRENT, sha, label)
    if recorded_release is not None and recorded_release != installed:
        return PolicyStatus(Standing.OTHER_RELEASE, sha, label)
    return PolicyStatus(Standing.STALE, sha, label)


def _legacy_bundled_name(path: str) -> str | None:
    if not path.startswith("policies/") or not path.endswith(".yaml"):
        return None
    name = path.removeprefix("policies/").removesuffix(".yaml")
    return name if is_bundled_policy(name) else None


def file_sha256(path: str) -> str | None:
    try:
        return source_sha256(read_regular_file(path, DEFAULT_LIMITS.max_bytes).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
