"""Gemini generateContent: the tool result is a `functionResponse` part, and its images are
`inlineData` in `functionResponse.parts` (Gemini 3 only; older models answer 400
`Multimodal function responses are not supported for this model`, research §1.4, §1.9).

No `$ref`/`displayName`, which 400 in practice (python-genai #2268, #2792). The response's
`name` is the name in the model's `functionCall`: it must be given, never guessed. Inline
requests are capped at 20 MB in total and Vertex at 7 MB per file, so one image stays under
7 MB; up to 900 images on Gemini 3 Pro; no hard edge limit is documented, 3072 px keeps
requests small. One turn's `functionResponse` parts are one user content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._probe import CALL_ID, DESCRIPTION, PROMPT, TOOL, empty_parameters
from ._shape import Limits, Message, Parts, Probe, Shape, one_user_message

__all__ = ["SHAPE"]


def _render(parts: Parts) -> list[Message]:
    key = "error" if parts.is_error else "output"
    response: Message = {
        "id": parts.call_id,
        "name": parts.tool_name,
        "response": {key: parts.text},
    }
    if parts.images:
        response["parts"] = [
            {"inlineData": {"mimeType": image.media_type, "data": image.base64}}
            for image in parts.images
        ]
    return [{"role": "user", "parts": [{"functionResponse": response}]}]


def _probe_body(model: str, result: list[Message]) -> dict[str, Any]:
    call = {"functionCall": {"id": CALL_ID, "name": TOOL, "args": {}}}
    declaration = {"name": TOOL, "description": DESCRIPTION, "parameters": empty_parameters()}
    return {
        "tools": [{"functionDeclarations": [declaration]}],
        "contents": [
            {"role": "user", "parts": [{"text": PROMPT}]},
            {"role": "model", "parts": [call]},
            *result,
        ],
    }


def _probe_reply(body: Mapping[str, Any]) -> str:
    candidates = body.get("candidates") or []
    first = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    parts = (first.get("content") or {}).get("parts") or []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict)).strip()


SHAPE = Shape(
    name="gemini",
    title="Gemini generateContent",
    limits=Limits(
        formats=("image/jpeg", "image/png", "image/webp"),
        max_image_base64=7_000_000,
        max_edge_px=3072,
        max_images_per_request=900,
    ),
    note=(
        "functionResponse.parts take inlineData (png, jpeg, webp) on Gemini 3 models only; "
        "inline requests are capped at 20 MB in total and Vertex at 7 MB per file; up to "
        "900 images on Gemini 3 Pro; 3072 px keeps requests small"
    ),
    render=_render,
    merge=one_user_message("parts"),
    probe=Probe(
        path=lambda model: f"/models/{model}:generateContent",
        key_headers=lambda key: {"x-goog-api-key": key},
        body=_probe_body,
        reply=_probe_reply,
    ),
)
