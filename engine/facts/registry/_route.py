"""The registry's answer as a value: the route for a provider and model (`ProviderRoute`), and
the `path` fact of a verdict and its evidence.

Alone here, apart from the registry's other values (`_types`), because a pair read back
(`_pairs`) holds a route and nothing else of the registry: each frozen dataclass costs a
start-up ~0.7 ms to make (issue 37)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    from visiongate.kernel.shapes import Limits

BUNDLED_FILE: Final = "providers.yaml"
T = TypeVar("T")

# Here rather than beside the schema, so that a registry read back from its fact table
# (`_tables`) imports no validator.
EVIDENCE: Final = ("documented", "field", "assumed")
"""What a registry verdict rests on, strongest first: a provider document, a production
agent's allow-list or user reports, or nothing but the API's general shape."""


def build(cls: type[T], values: dict[str, Any]) -> T:
    """An instance of the frozen dataclass `cls` whose `__dict__` is `values` (a fresh dict the
    caller hands over), without its generated `__init__`: on the decide path, where a
    never-seen pair builds a route, a model reference and the resolved facts, that `__init__`
    (one `object.__setattr__` per field) costs ~4x more, and keyword arguments gathered into a
    dict ~2x more. Every field must be given (checked in tests); the instance is as frozen as
    any other."""
    instance = _new(cls)
    _set(instance, "__dict__", values)
    return instance


_new = object.__new__
_set = object.__setattr__


TRUSTED_EVIDENCE: Final = ("documented", "declared", "probed")
"""Evidence on which `accepts` is the `path` fact `accepts`: a provider document, the
operator's declaration, or a probe that read an image back through the route."""


def path_of(accepts: bool, evidence: str) -> str:
    """The `path` fact for a verdict and its evidence."""
    if not accepts:
        return "refuses"
    return "accepts" if evidence in TRUSTED_EVIDENCE else "unverified"


def weaker(first: str, second: str) -> str:
    """The weaker of two registry evidences (`documented` > `field` > `assumed`)."""
    rank = {name: index for index, name in enumerate(EVIDENCE)}
    return max(first, second, key=lambda evidence: rank.get(evidence, len(EVIDENCE)))


@dataclass(frozen=True)
class ProviderRoute:
    """How images reach a provider and model: the `path` fact plus the payload facts."""

    provider: str
    """The registry id (aliases resolved), or the provider as given when it is unknown."""
    model: str
    api: str
    accepts_tool_images: bool
    """The verdict: images may be sent (see `path` for how much that is trusted)."""
    reason: str
    formats: tuple[str, ...]
    """Media types, in preference order (the first is the re-encode target)."""
    max_image_base64: int
    max_edge_px: int
    max_images_per_request: int
    known: bool
    """The registry lists the provider or the agent config declares it."""
    source: str = BUNDLED_FILE
    """Who decided: the registry file, the agent config declaration, or the routes overlay."""
    catalog: str = ""
    """The model catalog section to look the model up in (models.dev provider id)."""
    evidence: str = "documented"
    """`documented`, `field`, `assumed` (registry), `declared` (agent config), `learned` or
    `probed` (routes overlay)."""
    cites: str = ""
    """Where the evidence can be read, when the registry names it."""
    where: str = ""
    """`file:line` of the registry entry that decided, when one did."""
    user_after_tool: str = "allowed"
    """The provider's message-order rule for a user message right after a tool message:
    `allowed`, `bridge` (rendering inserts an assistant turn) or `refuses`
    (`visiongate.kernel.shapes` explains them)."""
    message_rule: str = ""
    """The rule's note, evidence and `file:line`, when a registry rule applies."""

    @property
    def path(self) -> str:
        """The `path` fact: `accepts`, `refuses` or `unverified`."""
        return path_of(self.accepts_tool_images, self.evidence)

    @property
    def limits(self) -> Limits:
        from visiongate.kernel.shapes import Limits

        return Limits(
            self.formats, self.max_image_base64, self.max_edge_px, self.max_images_per_request
        )
