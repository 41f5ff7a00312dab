"""The `visiongate` command's first step: load the command line, and end in one line if Ctrl-C
comes while it loads.

The console script and `python -m visiongate` both start here. This module imports only `sys`,
so the window in which a Ctrl-C still gives Python's own traceback is the interpreter's
start-up and this import. `visiongate.cli.main` runs inside the same `try` until it defers or
handles the signals itself, so a Ctrl-C in its first imports is the same one line. For `proxy`
and `mcp`, which start servers, the signals are noted before anything else loads
(`kernel._noted`): a `KeyboardInterrupt` raised inside a callback of Python's own is lost.

A command that returned its exit code leaves without the interpreter's teardown
(`visiongate.kernel._exit`: about 220 ms of CPU for an `mcp call`, 60 to 90 ms for a proxy).
"""

from __future__ import annotations

import sys

__all__ = ["run"]


def run() -> int:
    """Load the command line and run it; its exit code (130 for a Ctrl-C before the command
    handles the signals itself)."""
    try:
        if sys.argv[1:2] in (["proxy"], ["mcp"]):  # they start servers: no Ctrl-C may be lost
            # Before anything else is imported: a Ctrl-C that Python's own handler raises
            # inside an import's module-lock callback is dropped ("Exception ignored in"), and
            # every import before this line is one more such moment. (`_noted` and `signal`
            # register no exit handler, so `skip_teardown` below still comes first of those.)
            from visiongate.kernel._noted import note_signals

            note_signals()
        from visiongate.kernel._exit import returned, skip_teardown

        skip_teardown()  # before any exit handler of what loads below, so it runs after them
        from visiongate.cli import main

        # Inside the `try` too: `main` loads a little more (and `proxy` defers the signals)
        # before its own handling starts.
        code = main()
    except (KeyboardInterrupt, Exception) as error:
        if not isinstance(error, KeyboardInterrupt):  # one Python wrapped, as a dataclass is made
            from visiongate.kernel._noted import interruption_in

            if interruption_in(error) is None:
                raise
        print("visiongate: stopped by SIGINT", file=sys.stderr)
        return 130
    returned(code)
    return code
