"""A part of an image asked for (issue 34): a region in the original's coordinates, or rows.

`Router.vision_analyze(..., part=...)` routes only that part of the original, cut at 1:1 and
fitted on its own (the proxy's `visiongate_view_image` takes the same as `region` and
`rows_from`). Every bad request gets one clear error; before this, a model asking for the
rows a tall page's tiles left out could only get the whole page again, fitted the same way.
"""

from __future__ import annotations

import asyncio
import base64
import io
from typing import Any

import numpy as np
import pytest
from _image_samples import encode
from _routing_helpers import make_router
from PIL import Image

from visiongate.adapters._part_request import PartError, PartRequest
from visiongate.adapters._routed import RoutedResult
from visiongate.adapters._router import Router

NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}


def tall_page(width: int = 1280, height: int = 6000) -> bytes:
    """A gradient page (every row and column differs), so a cut can be checked by its pixels."""
    x = np.linspace(0, 255, width, dtype=np.float32)[None, :]
    y = np.linspace(0, 255, height, dtype=np.float32)[:, None]
    pixels = np.stack([x + 0 * y, y + 0 * x, (x + y) / 2], axis=2)
    return encode(Image.fromarray(pixels.astype(np.uint8)), "PNG")


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory) -> Router:
    return make_router(tmp_path_factory.mktemp("parts") / "cache")


@pytest.fixture(scope="module")
def page() -> bytes:
    return tall_page()


def routed_part(router: Router, data: bytes, arguments: dict[str, Any]) -> RoutedResult:
    part = PartRequest.from_arguments(arguments)
    return asyncio.run(router.vision_analyze(data, "", **NATIVE, part=part))


def sent_image(routed: RoutedResult) -> Image.Image:
    (image,) = routed.images
    picture = Image.open(io.BytesIO(base64.b64decode(image.base64)))
    picture.load()
    return picture.convert("RGB")


def test_a_region_is_the_originals_pixels_at_one_to_one(router: Router, page: bytes) -> None:
    data = page
    routed = routed_part(
        router, data, {"region": {"left": 100, "top": 5000, "width": 400, "height": 300}}
    )
    picture = sent_image(routed)
    assert picture.size == (400, 300)
    source = Image.open(io.BytesIO(data)).convert("RGB").crop((100, 5000, 500, 5300))
    difference = np.abs(np.asarray(picture, np.int16) - np.asarray(source, np.int16))
    assert float(difference.mean()) < 2.0
    assert "left 100, top 5000, 400x300 of the 1280x6000 original" in routed.text


def test_rows_from_an_offset_are_a_full_width_view_of_those_rows(
    router: Router, page: bytes
) -> None:
    routed = routed_part(router, page, {"rows_from": 4000})
    assert sent_image(routed).size == (1280, 1568)
    assert "top 4000, 1280x1568 of the 1280x6000 original" in routed.text


def test_the_last_rows_stop_at_the_end_of_the_page(router: Router, page: bytes) -> None:
    routed = routed_part(router, page, {"rows_from": 5500})
    assert sent_image(routed).size == (1280, 500)


BAD = [
    ({"region": {"left": 1200, "top": 0, "width": 200, "height": 100}}, "is not inside the"),
    ({"region": {"left": 0, "top": 5990, "width": 100, "height": 20}}, "is not inside the"),
    ({"region": {"left": -1, "top": 0, "width": 100, "height": 100}}, "is not inside the"),
    ({"region": {"left": 0, "top": 0, "width": 0, "height": 100}}, "positive width and height"),
    ({"region": {"left": 0, "top": 0, "width": 100, "height": -5}}, "positive width and height"),
    ({"region": {"left": 10, "top": 10, "width": 4, "height": 4}}, "absurd zoom"),
    ({"rows_from": 6000}, "past the last row"),
    ({"rows_from": -10}, "must be 0 or more"),
]


@pytest.mark.parametrize(("arguments", "message"), BAD)
def test_a_part_outside_the_image_is_refused_with_one_clear_error(
    router: Router, page: bytes, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(PartError, match=message) as refused:
        routed_part(router, page, arguments)
    assert "\n" not in str(refused.value)


MALFORMED = [
    ({"region": {"left": 0, "top": 0, "width": 10}}, "lacks `height`"),
    ({"region": [0, 0, 10, 10]}, "must be an object"),
    ({"region": {"left": 0.5, "top": 0, "width": 10, "height": 10}}, "whole number"),
    ({"region": {"left": True, "top": 0, "width": 10, "height": 10}}, "whole number"),
    ({"rows_from": "10"}, "whole number"),
    ({"rows_from": 10, "region": {"left": 0, "top": 0, "width": 9, "height": 9}}, "not both"),
]


@pytest.mark.parametrize(("arguments", "message"), MALFORMED)
def test_a_malformed_request_is_refused_before_any_image_is_read(
    arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(PartError, match=message):
        PartRequest.from_arguments(arguments)


def test_no_part_asked_is_the_whole_image() -> None:
    assert PartRequest.from_arguments({"path": "x"}) is None
