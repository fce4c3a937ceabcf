"""Targets: one small module per output kind (ansible, pulumi-aws, ...), registered explicitly."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from archform.render.writer import GeneratedFile
from archform.spec import BlueprintSet, Document
from archform.spec.release import Release

# Served releases by fleet name: the release.json copy beside a generated fleet, or what the
# registry records (generate --from-registry); see spec.release.
Releases = Mapping[str, Release]


@dataclass(frozen=True, slots=True)
class Target:
    """A generator: which documents it applies to and how it renders them."""

    name: str
    applies: Callable[[Document], bool]
    render: Callable[[Document, BlueprintSet], list[GeneratedFile]]
    # Targets whose output depends on deployment state (the served model release) render
    # through this instead, given the releases recorded in the output folder.
    render_state: Callable[[Document, BlueprintSet, Releases], list[GeneratedFile]] | None = None


_TARGETS: dict[str, Target] = {}


def register(target: Target) -> Target:
    """Add a target; names are unique."""
    if target.name in _TARGETS:
        raise ValueError(f"target {target.name!r} registered twice")
    _TARGETS[target.name] = target
    return target


def targets() -> list[Target]:
    """All registered targets, by name."""
    _load_builtin()
    return [_TARGETS[name] for name in sorted(_TARGETS)]


_LOADED = False


def _load_builtin() -> None:
    """Import the built-in target modules once (explicit list, sorted)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from archform.render import targets as builtin

    for target in builtin.BUILTIN:
        register(target)
