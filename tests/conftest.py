"""Fixtures shared by the routing tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _routing_helpers import PROXY_VARIABLES, VisionEndpoint, vision_endpoint


@pytest.fixture(scope="module")
def endpoint() -> Iterator[VisionEndpoint]:
    """A chat-completions vision endpoint on loopback, with proxies unset so it is reached."""
    with pytest.MonkeyPatch.context() as patch:
        for name in PROXY_VARIABLES:
            patch.delenv(name, raising=False)
        with vision_endpoint() as running:
            yield running
