"""`VisiongateError`: the one root of every exception visiongate raises on purpose.

As httpx's `HTTPError`, one `except visiongate.VisiongateError` catches whatever the gate, the
adapters or the command line raise about their input, and nothing else. Each class keeps the
built-in base its callers already catch (`FactError` is still a `ValueError`, `ClientGone` a
`ConnectionError`, `McpSdkMissing` an `ImportError`), so adding the root broke no `except`:

    VisiongateError
    ├── PolicyError              a policy, registry or agent config that cannot be used
    ├── FactError (ValueError)   a fact given directly that is not in the vocabulary
    ├── CompileError (RuntimeError)
    ├── SourceError, MissingPathError, FormatError > NotPolicyError (ValueError)
    ├── InputError               an audit input that cannot be read
    ├── LoadAbort                a YAML file read no further (caught inside the loader)
    ├── Refusal                  an image that must not be attached
    ├── VisionUnavailable > VisionConfigError
    ├── VisionSettingError (ValueError)  an `auxiliary.vision` value the backend cannot use
    ├── ListingError, MessageTooLarge, InvalidToolResult (ValueError)
    ├── ServerError (mcp.shared.exceptions.MCPError)
    ├── ClientGone, UpstreamClosed (ConnectionError)
    ├── McpSdkMissing (ImportError)
    ├── PolicyCaseFailure        a policy test case run by the pytest plugin
    └── the command line's: CommandExit > UsageError, Interrupted, StdoutError (OSError)

`tests/test_errors.py` walks the package and holds every class to this tree.
"""

from __future__ import annotations

__all__ = ["VisiongateError"]


class VisiongateError(Exception):
    """The root of every exception visiongate raises on purpose."""
