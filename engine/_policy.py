"""The frozen policy model, built from a validated document."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from visiongate.kernel._digest import sha256

from ._diagnostics import Diagnostic, Location
from ._settings import (
    EMBED_TARGET_HELP,
    INVISIBLE_CHANNELS,
    ExecutionSettings,
    InvisibleMode,
    NativeSettings,
    SanitizeSettings,
    TextAction,
    UserOnly,
    clamp_embed_target,
    clamped_message,
)
from ._vocabulary import FACT_NAMES, FACTS, Cell
from ._yaml import LoadedYaml

Condition = Mapping[str, frozenset[str]]
"""fact name -> allowed values; a fact that is absent matches any value."""


@dataclass(frozen=True)
class Rule:
    """One rule of the policy: the cells its `when` matches, the lane it names for them and
    why; `index` is its position among the policy's rules."""

    id: str
    when: Condition
    lane: str
    reason: str
    index: int
    location: Location
    description: str = ""

    def when_text(self) -> str:
        """The condition as one line, e.g. `mode=auto catalog=vision|unknown` (`*` for all)."""
        parts = [
            f"{fact}={'|'.join(v for v in FACTS[fact] if v in self.when[fact])}"
            for fact in FACT_NAMES
            if fact in self.when
        ]
        return " ".join(parts) or "*"


@dataclass(frozen=True)
class Invariant:
    """A promise the table must keep: every cell its `when` matches gets the lane `expect`."""

    id: str
    when: Condition
    expect: str
    location: Location
    description: str = ""


@dataclass(frozen=True, eq=False)
class Policy:
    """A validated policy, before compilation. Immutable."""

    name: str
    version: str
    description: str
    hit_policy: str
    default: str
    rules: tuple[Rule, ...]
    invariants: tuple[Invariant, ...]
    execution: ExecutionSettings
    sanitize: SanitizeSettings
    sha256: str
    path: str
    source: LoadedYaml
    lint_severity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    lint_fail_level: str = "error"
    drops_invariants: tuple[str, ...] = ()
    """Invariant ids this version removes on purpose: a reload accepts their absence."""
    warnings: tuple[Diagnostic, ...] = ()
    """What the policy says that is read otherwise (a clamped byte budget): lint reports
    them, and every decision record carries them in `warnings`."""


def unmet_fact(when: Condition, cell: Cell) -> str | None:
    """The first fact (in vocabulary order) whose value in `cell` the condition excludes."""
    for fact, value in zip(FACT_NAMES, cell, strict=True):
        allowed = when.get(fact)
        if allowed is not None and value not in allowed:
            return fact
    return None


def condition_matches(when: Condition, cell: Cell) -> bool:
    """Whether a condition selects a cell (used for invariants, which are not rules)."""
    return unmet_fact(when, cell) is None


def source_sha256(text: str) -> str:
    return sha256(text.encode("utf-8")).hexdigest()


def build_policy(document: Mapping[str, Any], loaded: LoadedYaml) -> Policy:
    """Build the model from a document that passed the schema."""
    lint = document.get("lint", {})
    return Policy(
        name=str(document["policy"]),
        version=str(document["version"]),
        description=str(document["description"]).strip(),
        hit_policy=str(document["hit_policy"]),
        default=str(document["default"]),
        rules=tuple(
            _build_rule(rule, index, loaded) for index, rule in enumerate(document["rules"])
        ),
        invariants=tuple(
            _build_invariant(invariant, index, loaded)
            for index, invariant in enumerate(document.get("invariants", []))
        ),
        execution=build_execution(document.get("execution", {})),
        sanitize=build_sanitize(document.get("sanitize", {})),
        sha256=source_sha256(loaded.text),
        path=loaded.file,
        source=loaded,
        lint_severity=MappingProxyType(dict(lint.get("severity", {}))),
        lint_fail_level=str(lint.get("fail_level", "error")),
        drops_invariants=tuple(document.get("drops_invariants", ())),
        warnings=clamped_settings(document, loaded),
    )


def clamped_settings(document: Mapping[str, Any], loaded: LoadedYaml) -> tuple[Diagnostic, ...]:
    """A located `clamped-setting` warning for each `embed_target_bytes` (of the native lane
    or one source's) outside the byte budgets the native lane takes; the nearest bound
    applies, as it does for an agent config's `vision.embed_target_bytes`."""
    native = document.get("execution", {}).get("native", {})
    sections = [(("execution", "native"), native)] + [
        (("execution", "native", "sources", source), overrides)
        for source, overrides in native.get("sources", {}).items()
    ]
    found = []
    for where, section in sections:
        if "embed_target_bytes" not in section:
            continue
        value = int(section["embed_target_bytes"])
        clamped = clamp_embed_target(value)
        if clamped != value:
            path = (*where, "embed_target_bytes")
            message = clamped_message(value, clamped)
            location = loaded.location(path)
            found.append(
                Diagnostic("clamped-setting", "warning", message, location, path, EMBED_TARGET_HELP)
            )
    return tuple(found)


def _condition(when: Mapping[str, list[str]]) -> Condition:
    return MappingProxyType({fact: frozenset(values) for fact, values in when.items()})


def _build_rule(rule: Mapping[str, Any], index: int, loaded: LoadedYaml) -> Rule:
    return Rule(
        id=rule["id"],
        when=_condition(rule.get("when", {})),
        lane=rule["lane"],
        reason=" ".join(str(rule["reason"]).split()),
        index=index,
        location=loaded.location(("rules", index)),
        description=str(rule.get("description", "")).strip(),
    )


def _build_invariant(invariant: Mapping[str, Any], index: int, loaded: LoadedYaml) -> Invariant:
    return Invariant(
        id=invariant["id"],
        when=_condition(invariant.get("when", {})),
        expect=invariant["expect"],
        location=loaded.location(("invariants", index)),
        description=str(invariant.get("description", "")).strip(),
    )


def _native(section: Mapping[str, Any], base: NativeSettings) -> NativeSettings:
    keys = ("max_images", "candidates", "max_edge_px", "tall_images", "lone_image")
    values: dict[str, Any] = {key: section[key] for key in keys if key in section}
    if "legibility_scale" in section:
        values["legibility_scale"] = float(section["legibility_scale"])
    if "embed_target_bytes" in section:
        values["embed_target_bytes"] = clamp_embed_target(int(section["embed_target_bytes"]))
    return NativeSettings(**{**base.__dict__, **values})


def build_execution(section: Mapping[str, Any]) -> ExecutionSettings:
    defaults = ExecutionSettings()
    native_section = section.get("native", {})
    native = _native(native_section, defaults.native)
    by_source = {
        source: _native(overrides, native)
        for source, overrides in native_section.get("sources", {}).items()
    }
    text = {**defaults.text, **section.get("text", {})}
    return ExecutionSettings(
        native=native,
        native_by_source=MappingProxyType(by_source),
        text=MappingProxyType(cast(dict[str, TextAction], text)),
        keep_recent_images=section.get("keep_recent_images"),
        max_calls_per_image=section.get("max_calls_per_image"),
        user_only=cast(UserOnly, section.get("user_only", defaults.user_only)),
    )


def build_sanitize(section: Mapping[str, Any]) -> SanitizeSettings:
    defaults = SanitizeSettings()
    tags = section.get("tags", {})
    invisible = section.get("invisible", {})
    meta = section.get("meta", {})
    return SanitizeSettings(
        allowed_flag_tags=tuple(tags.get("allowed_flags", defaults.allowed_flag_tags)),
        **{channel: invisible_mode(invisible.get(channel)) for channel in INVISIBLE_CHANNELS},
        reserved_meta_labels=tuple(meta.get("reserved_labels", defaults.reserved_meta_labels)),
        reserved_meta_keys=tuple(meta.get("reserved_keys", defaults.reserved_meta_keys)),
    )


def invisible_mode(value: object) -> InvisibleMode:
    """A channel's mode as written: absent is `strip`; the legacy booleans map `true` to `strip`
    and `false` to `keep` (what they meant; lint warns that they are deprecated)."""
    if value is None or value is True:
        return "strip"
    if value is False:
        return "keep"
    return cast(InvisibleMode, value)
