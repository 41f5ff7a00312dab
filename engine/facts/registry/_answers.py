"""The pieces of a registry query (`ProviderRegistry.route`): a verdict before the limits are
attached, what of the registry applies to one provider, and the look-ups and matches every
never-seen model goes through."""

from __future__ import annotations

from typing import NamedTuple, TypeVar

from ._route import ProviderRoute
from ._types import Entry, Evidence, Limits, MessageRule, ModelRef, Patterns, Veto, build


class Answer(NamedTuple):
    """The decision part of a route, before the limits are attached (a named tuple: built for
    every never-seen model, and a tuple is built in C)."""

    api: str
    accepts: bool
    reason: str
    source: str
    evidence: Evidence


class Applicable(NamedTuple):
    """What of the registry can apply to one provider id, kept per id: the patterns do not
    change, and a never-seen model on the provider needs all of it."""

    vetoes: tuple[Veto, ...]
    rules: tuple[MessageRule, ...]
    screen: Patterns | None
    """Every model pattern of the entry's rules, the vetoes and the message rules above; a
    model it does not match meets none of them (None: there are none)."""
    answer: Answer
    """The entry's own answer, when no model rule matches; for a provider the registry does
    not list, its refusal (the config declares no model of it to read images)."""


Matched = TypeVar("Matched", Veto, MessageRule)


def first_match(items: tuple[Matched, ...], ref: ModelRef) -> Matched | None:
    """The first veto or rule whose model patterns match the model (plain loops: this runs
    for every never-seen model)."""
    if not items:
        return None
    names = (ref.matched,) if ref.matched == ref.model else (ref.matched, ref.model)
    for item in items:
        for name in names:
            if item.model.matches(name):
                return item
    return None


def as_gateways_list(entry: Entry, model: str, given: str = "") -> list[tuple[str, str, str]]:
    how, catalog = entry.as_gateways_list, entry.catalog
    return [(catalog, f"{name}/{model}", how) for name in entry.vendor_names if name != given]


def rule_blocks(rule: MessageRule, api: str) -> bool:
    """A rule that leaves no valid order for a shape whose images follow in a user message."""
    # The shapes' table (every provider's module) when a rule asks: 2 ms of a `decide`.
    from visiongate.kernel.shapes import shape_named

    return rule.user_after_tool == "refuses" and shape_named(api).user_follows_tool


def entry_answer(entry: Entry, model: str, vision: str, label: str) -> Answer | None:
    """The verdict of the provider's first model rule that matches, if any."""
    for rule in entry.rules:
        if rule.match.matches(model) and (rule.when_catalog is None or vision in rule.when_catalog):
            verb = "accepts" if rule.tool_result_images else "refuses"
            reason = f"{entry.id} {verb} `{model}` ({rule.evidence.kind}): {rule.note}"
            api = rule.api or entry.api
            return Answer(api, rule.tool_result_images, reason, label, rule.evidence)
    return None


def own_answer(entry: Entry, label: str) -> Answer:
    """The provider's verdict for a model no rule of it matches."""
    verb = "accepts" if entry.tool_result_images else "refuses"
    reason = f"{entry.id} {verb} ({entry.evidence.kind}): {entry.note}"
    return Answer(entry.api, entry.tool_result_images, reason, label, entry.evidence)


def strip_variants(model: str, variants: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """`model` without a routing-variant suffix (`:nitro`), and a note saying so."""
    base, colon, suffix = model.rpartition(":")
    if colon and base and suffix.lower() in variants:
        return base, (f"routing variant `:{suffix}` stripped",)
    return model, ()


def profile_lookups(
    catalog: str, model: str, prefixes: tuple[str, ...]
) -> list[tuple[str, str, str]]:
    """The base model of a cross-region inference profile id (`us.amazon.nova-pro-v1:0` is
    `amazon.nova-pro-v1:0`), looked up after the profile id itself."""
    prefix = next((p for p in prefixes if model.lower().startswith(p)), None)
    if prefix is None or len(model) == len(prefix):
        return []
    base = model[len(prefix) :]
    return [(catalog, base, f"inference profile `{model[: len(prefix)]}` of `{base}`")]


def route_of(
    ref: ModelRef, answer: Answer, limits: Limits, known: bool, rule: MessageRule | None
) -> ProviderRoute:
    """The route for a located model, its answer and the limits of its shape."""

    if rule is None:
        user_after_tool, message_rule = "allowed", ""
    else:
        user_after_tool = rule.user_after_tool
        message_rule = f"{rule.note} ({rule.evidence.kind}, {rule.evidence.where})"
    return build(
        ProviderRoute,
        {
            "provider": ref.provider,
            "model": ref.model,
            "api": answer.api,
            "accepts_tool_images": answer.accepts,
            "reason": answer.reason,
            "formats": limits.formats,
            "max_image_base64": limits.max_image_base64,
            "max_edge_px": limits.max_edge_px,
            "max_images_per_request": limits.max_images_per_request,
            "known": known,
            "source": answer.source,
            "catalog": ref.catalog,
            "evidence": answer.evidence.kind,
            "cites": answer.evidence.cites,
            "where": answer.evidence.where,
            "user_after_tool": user_after_tool,
            "message_rule": message_rule,
        },
    )


def unknown_answer(
    name: str, model: str, declared_vision: str | None, default_api: str, label: str
) -> Answer:
    """The verdict for a provider the registry does not list (`model` as the config declares
    it reads images, when `declared_vision` says where)."""
    if declared_vision is not None:
        reason = (
            f"`{name}` is not in {label}, but {declared_vision} declares that "
            f"`{model}` reads images; like the production agent, a custom or local "
            "endpoint serving such a model is opened, unverified"
        )
        evidence = Evidence("field", "production agent rule (research §1.6b)", "")
        return Answer(default_api, True, reason, "agent config", evidence)
    reason = (
        f"`{name}` is not in {label} nor declared in the agent config, so it "
        f"refuses (declare `providers.{name}.tool_result_images` to change that)"
    )
    return Answer(default_api, False, reason, label, Evidence("assumed", "", ""))
