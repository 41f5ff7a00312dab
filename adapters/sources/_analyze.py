"""Route `vision_analyze`: a tool that loads an image to answer a question about it.

Native lane: the image (fitted to the route) and the question go to the main model, which
answers itself. Text lane: the auxiliary backend answers the question (`describe`), or the
image is only referenced; either way no pixels enter the conversation.
"""

from __future__ import annotations

from .._routed import RoutedResult
from ._lane import LaneContext
from ._screenshots import SingleImage, route_single

__all__ = ["route_vision_analyze"]


async def route_vision_analyze(
    image: bytes,
    question: str,
    context: LaneContext,
    *,
    path: str | None = None,
    note: str | None = None,
) -> RoutedResult:
    """Route one `vision_analyze` call for the decision in `context`; `note` is a line the
    model reads with it (where a part of the image it asked for lies in the original)."""
    if context.source != "vision_analyze":
        raise ValueError(f"`{context.source}` is not `vision_analyze`")
    text = f"vision_analyze: {question}" if question else "vision_analyze"
    if note:
        text += f"\n[{note}]"
    return await route_single(SingleImage(image, "image", text, path, question or None), context)
