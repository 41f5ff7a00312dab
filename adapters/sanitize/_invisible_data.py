"""Unicode data for the invisible-character model, read once at import from
`_invisible_data.json`, which tools/invisible_tables.py generates.

Do not edit the data: regenerate it from the Unicode files (see the script's docstring). Code
points are hex; `a-b` is a range; sequences join code points with `.`; variation bases are
`base:selector,...` and ideographic ones `base:count` (VS17 up to that many). Each table is
stored as its text cut into lines (joined back here), so that a new Unicode version shows as
a readable diff.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final

__all__ = ["EMOJI_VERSION", "IVD_VERSION", "TABLES", "UNICODE_VERSION"]

_DATA: Final[dict[str, Any]] = json.loads(
    (resources.files(__package__) / "_invisible_data.json").read_text("utf-8")
)

UNICODE_VERSION: Final[str] = _DATA["unicode_version"]
EMOJI_VERSION: Final[str] = _DATA["emoji_version"]
IVD_VERSION: Final[str] = _DATA["ivd_version"]
TABLES: Final[dict[str, str]] = {name: "".join(lines) for name, lines in _DATA["tables"].items()}
