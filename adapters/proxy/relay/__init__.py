"""The raw JSON-RPC relay between one client and one server (`Relay`, in `_relay`): each
direction has its own handlers (`_client_side`, `_server_side`) over the state they share
(`_state`)."""

from ._relay import Relay
from ._state import SESSION_LABEL, UPSTREAM_GONE, log

__all__ = ["SESSION_LABEL", "UPSTREAM_GONE", "Relay", "log"]
