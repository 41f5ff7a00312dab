"""What the proxy cleans in the server's messages besides tool results, by method.

Every text a server sends towards the client goes through the policy's `sanitize` rules:
`initialize` (server info, instructions), the tool, resource and prompt listings and reads
(`sanitize._listings`), completions, task status, log and progress notifications, sampling and
elicitation requests, and every JSON-RPC error. A line of prose that reads as `MEDIA:` is
marked `[unverified] ` (tool descriptions, prompt and resource text, log messages, elicitation
prompts), so no agent surface takes a server's words for a file the proxy wrote. Identifiers
are cleaned but never marked (a URI must stay usable). Methods not named here pass unchanged,
as the protocol's later versions and vendor extensions need. `_meta` in requests and
notifications keeps its reserved keys (`progressToken` belongs to the protocol).

Each function returns its input itself when nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..sanitize._listings import (
    ERROR,
    FIELDS,
    PROMPT,
    sanitize_error_data,
    sanitize_get_prompt_result,
    sanitize_list_prompts_result,
    sanitize_list_resource_templates_result,
    sanitize_list_resources_result,
    sanitize_list_tools_result,
    sanitize_read_resource_result,
)
from ..sanitize._media import mark_unverified_media
from ..sanitize._sanitizer import Sanitizer

__all__ = [
    "PROSE_KEYS",
    "clean_error",
    "clean_notification",
    "clean_result",
    "clean_server_request",
    "mark_prose",
]

Cleaner = Callable[[Any, Sanitizer], Any]

PROSE_KEYS: Final = frozenset(
    {"text", "description", "title", "message", "instructions", "systemPrompt", "statusMessage"}
)
"""Keys whose string values are prose a model reads: these get the `MEDIA:` guard too."""
UNVERIFIED_MEDIA: Final = "unverified_media_lines"


def mark_prose(value: Any, sanitizer: Sanitizer, surface: str, prose: bool = False) -> Any:
    """`value` with every prose string's `MEDIA:` lines marked (counted under `surface`)."""
    if isinstance(value, str):
        if not prose:
            return value
        marked, count = mark_unverified_media(value)
        sanitizer.note(surface, UNVERIFIED_MEDIA, count)
        return marked
    if isinstance(value, Mapping):
        items = {
            k: mark_prose(v, sanitizer, surface, prose or k in PROSE_KEYS) for k, v in value.items()
        }
        return value if all(items[k] is v for k, v in value.items()) else items
    if isinstance(value, list):
        marked_items = [mark_prose(item, sanitizer, surface, prose) for item in value]
        unchanged = all(new is old for new, old in zip(marked_items, value, strict=True))
        return value if unchanged else marked_items
    return value


def _listing(clean: Cleaner, surface: str) -> Cleaner:
    return lambda result, sanitizer: mark_prose(clean(result, sanitizer), sanitizer, surface)


def _everything(surface: str, prose_everywhere: bool = False) -> Cleaner:
    def clean(value: Any, sanitizer: Sanitizer) -> Any:
        cleaned = sanitizer.value(value, surface)
        return mark_prose(cleaned, sanitizer, surface, prose_everywhere)

    return clean


def _initialize(result: Any, sanitizer: Sanitizer) -> Any:
    """The server's name, version and instructions (which clients put in the model's context);
    the protocol version and capabilities pass as negotiated."""
    if not isinstance(result, Mapping):
        return result
    cleaned = dict(result)
    changed = False
    for key, surface in (("serverInfo", FIELDS), ("instructions", "instructions")):
        if key in result:
            cleaned[key] = mark_prose(
                sanitizer.value(result[key], surface), sanitizer, surface, key == "instructions"
            )
            changed = changed or cleaned[key] is not result[key]
    return cleaned if changed else result


_RESULTS: Final[Mapping[str, Cleaner]] = {
    "initialize": _initialize,
    "tools/list": _listing(sanitize_list_tools_result, "tool"),
    "resources/list": _listing(sanitize_list_resources_result, "resource"),
    "resources/templates/list": _listing(sanitize_list_resource_templates_result, "resource"),
    "resources/read": _listing(sanitize_read_resource_result, "resource_read"),
    "prompts/list": _listing(sanitize_list_prompts_result, PROMPT),
    "prompts/get": _listing(sanitize_get_prompt_result, PROMPT),
    "completion/complete": _everything("completion"),
    "tasks/get": _everything("task"),
    "tasks/list": _everything("task"),
    "tasks/cancel": _everything("task"),
}

_SERVER_REQUESTS: Final[Mapping[str, Cleaner]] = {
    "sampling/createMessage": _everything("sampling"),
    "elicitation/create": _everything("elicitation"),
}

_NOTIFICATIONS: Final[Mapping[str, Cleaner]] = {
    # A log message's `data` is any JSON the client shows (or hands the model): all prose.
    "notifications/message": _everything("log", prose_everywhere=True),
    "notifications/progress": _everything("progress"),
    "notifications/resources/updated": _everything(FIELDS),
    "notifications/tasks/status": _everything("task"),
    "notifications/cancelled": _everything("notification"),
    "notifications/elicitation/complete": _everything("elicitation"),
}


def clean_result(method: str, result: Any, sanitizer: Sanitizer) -> Any:
    """The result of a client request (`method`), cleaned; unknown methods pass unchanged."""
    clean = _RESULTS.get(method)
    return clean(result, sanitizer) if clean is not None else result


def clean_server_request(method: str, params: Any, sanitizer: Sanitizer) -> Any:
    clean = _SERVER_REQUESTS.get(method)
    return clean(params, sanitizer) if clean is not None else params


def clean_notification(method: str, params: Any, sanitizer: Sanitizer) -> Any:
    clean = _NOTIFICATIONS.get(method)
    return clean(params, sanitizer) if clean is not None else params


def clean_error(error: Any, sanitizer: Sanitizer) -> Any:
    """A JSON-RPC error object (any method's): message and data are the server's words."""
    if not isinstance(error, Mapping):
        return sanitizer.value(error, ERROR)
    return mark_prose(sanitize_error_data(error, sanitizer), sanitizer, ERROR)
