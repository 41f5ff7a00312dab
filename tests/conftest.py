"""Fixtures shared by the routing tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _routing_helpers import VisionEndpoint, vision_endpoint, without_proxies


@pytest.fixture(scope="module")
def endpoint() -> Iterator[VisionEndpoint]:
    """A chat-completions vision endpoint on loopback, with proxies unset so it is reached."""
    with without_proxies(), vision_endpoint() as running:
        yield running


@pytest.fixture(autouse=True, scope="session")
def _private_state_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Learned routes default to `$XDG_STATE_HOME/visiongate/routes.json`: point it at an empty
    directory, so no test reads or writes the routes of the machine it runs on. The policy
    compile cache gets a private directory too (and every load of the suite goes through it),
    and so does the facts cache (refreshed catalog, probed local runtimes)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
        patch.setenv("VISIONGATE_POLICY_CACHE", str(tmp_path_factory.mktemp("policy-cache")))
        # Refreshed catalogs and probed runtimes: none of the machine's own.
        patch.setenv("VISIONGATE_FACTS_CACHE", str(tmp_path_factory.mktemp("facts-cache")))
        yield
