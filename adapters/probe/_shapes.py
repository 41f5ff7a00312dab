"""The probe's view of the API shapes: the request each shape module describes
(`visiongate.kernel.shapes`, its `probe`), with the tool result carrying the code image exactly as
the router would send it (`render_payload`).

| api                | endpoint (appended to the base URL)   | key header                  |
|--------------------|---------------------------------------|-----------------------------|
| `anthropic`        | `/v1/messages`                        | `x-api-key`                 |
| `openai-responses` | `/responses`                          | `Authorization: Bearer ...` |
| `openai-chat`      | `/chat/completions`                   | `Authorization: Bearer ...` |
| `gemini`           | `/models/<model>:generateContent`     | `x-goog-api-key`            |

The base URLs follow each vendor SDK's convention: `https://api.anthropic.com`,
`https://api.openai.com/v1`, `https://generativelanguage.googleapis.com/v1beta`.
"""

from __future__ import annotations

from visiongate.kernel.shapes import BY_NAME, PROBE_APIS, Probe
from visiongate.kernel.shapes._probe import CALL_ID, PROMPT, TOOL

__all__ = ["CALL_ID", "PROBE_APIS", "PROMPT", "TOOL", "shape_for"]


def shape_for(api: str) -> Probe:
    """How the probe speaks `api`; a `ValueError` for a shape the probe does not speak."""
    found = BY_NAME.get(api)
    if found is None or found.probe is None:
        raise ValueError(
            f"the probe does not speak api `{api}`: give `--api` with one of "
            + ", ".join(f"`{name}`" for name in PROBE_APIS)
        )
    return found.probe
