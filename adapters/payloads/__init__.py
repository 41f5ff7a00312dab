"""Provider payloads: a routed result rendered as the tool-result message(s) of one API shape
(`anthropic`, `openai-responses`, `openai-chat`, `gemini`, `bedrock`), with a last-resort
guard that withholds pixels a route cannot take."""

from ._render import API_NAMES, Payload, render_payload

__all__ = ["API_NAMES", "Payload", "render_payload"]
