"""The event loop stays responsive while a 24 M-character image result is routed (issue 27).

Decoding 24 M characters of base64 took 45-55 ms in two C calls that hold the GIL, so the loop
stalled for that long even with the decode in a worker thread; `Router.mcp` blocked it for
79-199 ms. Lag is measured as how late a 1 ms sleep wakes up, first with nothing else to do
(the machine's own noise: other processes on a shared 2-core machine), then while the result
is routed; the test holds the difference to 20 ms.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import random
import time

import numpy as np
import pytest
from _routing_helpers import make_router
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from visiongate.adapters.images import decode_base64
from visiongate.adapters.images._container.base64_text import PIECE_CHARS

NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
ALLOWED_LAG_S = 0.020
ATTEMPTS = 3
"""A scheduler hiccup on a loaded machine can stall any process for tens of ms once; a GIL
held for 40 ms by the decode stalls the loop on every attempt. One clean attempt of three
shows the mechanism works; three stalled ones show it does not."""


def big_result() -> dict[str, object]:
    """A 5120x2880 PNG of noise and flat colour: 24 M characters of base64."""
    rng = np.random.default_rng(27)
    pixels = np.full((2880, 5120, 3), 240, np.uint8)
    pixels[:1900] = rng.integers(0, 256, (1900, 5120, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG", compress_level=1)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    assert len(encoded) >= 24_000_000
    return {"content": [{"type": "image", "data": encoded, "mimeType": "image/png"}]}


async def _lag_while(work: asyncio.Future[object] | None, seconds: float) -> float:
    """The latest a 1 ms sleep woke while `work` ran (or for `seconds` with no work)."""
    worst = 0.0
    deadline = time.perf_counter() + seconds
    while (work is not None and not work.done()) or (
        work is None and time.perf_counter() < deadline
    ):
        started = time.perf_counter()
        await asyncio.sleep(0.001)
        worst = max(worst, time.perf_counter() - started - 0.001)
    return worst


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_routing_a_24m_character_result_keeps_the_loop_within_20ms_of_idle(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = big_result()

    async def attempt(round_number: int) -> tuple[float, float]:
        router = make_router(tmp_path / f"cache-{round_number}")
        idle = await _lag_while(None, 0.5)
        routing = asyncio.ensure_future(router.mcp(result, **NATIVE, trace=False))
        busy = await _lag_while(routing, 0.0)
        routed = await routing
        assert len(routed.images) == 1
        return idle, busy

    seen = []
    for round_number in range(ATTEMPTS):
        idle, busy = asyncio.run(attempt(round_number))
        seen.append((round(idle * 1000, 1), round(busy * 1000, 1)))
        if busy - idle <= ALLOWED_LAG_S:
            print(f"\nloop lag, idle and while routing (ms): {seen[-1]}")
            return
    pytest.fail(
        f"the loop lagged more than 20 ms over idle on every attempt (idle, busy ms): {seen}"
    )


@given(st.binary(max_size=3 * PIECE_CHARS // 4 * 2 + 7))
def test_decoding_in_pieces_gives_what_b64decode_gives(data: bytes) -> None:
    assert decode_base64(base64.b64encode(data).decode("ascii")) == data


@pytest.mark.parametrize(
    "spoil",
    [
        lambda text: text[:-1],  # length not a multiple of 4
        lambda text: text[: PIECE_CHARS - 2] + "==" + text[PIECE_CHARS:],  # padding mid-way
        lambda text: text[:10] + "*" + text[11:],  # not a base64 digit
        lambda text: text[:10] + "é" + text[11:],  # not ascii
        lambda text: text + "====",
    ],
    ids=["length", "padding-mid-way", "digit", "non-ascii", "excess-padding"],
)
def test_decoding_in_pieces_refuses_what_b64decode_refuses(spoil) -> None:  # type: ignore[no-untyped-def]
    text = spoil(base64.b64encode(random.Random(27).randbytes(1_000_000)).decode("ascii"))
    assert len(text) > PIECE_CHARS
    with pytest.raises(ValueError):
        base64.b64decode(text, validate=True)
    with pytest.raises((binascii.Error, ValueError)):
        decode_base64(text)
