"""What a target is: one small module per output kind (ansible, pulumi-aws, ...).

The built-in targets are listed explicitly in render.targets (BUILTIN, `targets()`); this
module knows none of them, so no import runs back from here into the targets.
"""

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
