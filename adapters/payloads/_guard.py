"""The last-resort payload guard: which images may be sent, for one route and API shape.

An image is sent only in the native lane, on a route whose `path` fact is not `refuses`, in a
result that is not an error, within the shape's formats, per-image bytes, edge and count. The
router runs this guard while it carries the lane out, before it writes the decision record,
so an image the guard withholds is recorded as refused, never as attached; rendering runs it
again for whatever API shape it is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from visiongate.engine.facts import ProviderRegistry, ProviderRoute
from visiongate.kernel.shapes import Limits

from ..images import ProcessedImage

__all__ = ["GUARD_PREFIX", "Limits", "Withheld", "guard_images", "limits_for", "refusal"]

GUARD_PREFIX = "payload guard: "
"""How a refusal reason says the payload guard, not the image stage, withheld the image."""


@dataclass(frozen=True)
class Withheld:
    """An image the guard kept out of the payload, and why."""

    index: int
    """1-based position among the images it was given."""
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "reason": self.reason}


def limits_for(
    route: ProviderRoute, api: str | None = None, registry: ProviderRegistry | None = None
) -> Limits:
    """The limits of `api` (default: the route's own): the route's when it is its own API,
    else the registry's for that shape (the bundled registry when none is given)."""
    if api is None or api == route.api:
        return route.limits
    return (registry or ProviderRegistry.bundled()).apis[api]


def refusal(lane: str, route: ProviderRoute, is_error: bool) -> str | None:
    """Why no image of a result may be sent at all, or None."""
    if lane != "native":
        return f"the lane is `{lane}`, so no pixels enter the conversation"
    if route.path == "refuses":
        return f"the route refuses images in tool results ({route.reason})"
    if is_error:
        return "error results stay text"
    return None


def guard_images(
    images: Sequence[ProcessedImage],
    *,
    lane: str,
    route: ProviderRoute,
    is_error: bool,
    limits: Limits,
) -> tuple[tuple[ProcessedImage, ...], tuple[Withheld, ...]]:
    """The images that may be sent, and the others with the reason each is withheld."""
    if not images:
        return (), ()
    whole = refusal(lane, route, is_error)
    if whole is not None:
        return (), tuple(Withheld(index, whole) for index in range(1, len(images) + 1))
    sent: list[ProcessedImage] = []
    withheld: list[Withheld] = []
    for index, image in enumerate(images, start=1):
        problem = _image_problem(image, limits, len(sent))
        if problem is None:
            sent.append(image)
        else:
            withheld.append(Withheld(index, problem))
    return tuple(sent), tuple(withheld)


def _image_problem(image: ProcessedImage, limits: Limits, already_sent: int) -> str | None:
    if image.media_type not in limits.formats:
        return f"`{image.media_type}` is not among the api's formats"
    if len(image.base64) > limits.max_image_base64:
        return f"{len(image.base64)} base64 bytes exceed the api's {limits.max_image_base64}"
    if max(image.width, image.height) > limits.max_edge_px:
        return f"{image.width}x{image.height} exceeds the api's {limits.max_edge_px} px edge"
    if already_sent >= limits.max_images_per_request:
        return f"the api takes at most {limits.max_images_per_request} images"
    return None
