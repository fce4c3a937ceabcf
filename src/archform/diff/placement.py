"""Node-count and colocation changes judged by each provider's placement rules (TrainingCluster).

Whether adding or removing nodes disturbs the nodes already running depends on the
provider's co-location primitive, as archform's generated program uses it: each provider's
`diff.py` (archform/providers/<name>/diff.py) says so, with its sources.
"""

from __future__ import annotations

from typing import Any

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.provider import ProviderDiff, diff_of, provider_of

Verdict = tuple[Impact, str]


def placement_of(root: dict[str, Any]) -> dict[str, Any]:
    """`placement` of a raw blueprint ({} when absent)."""
    placement = root.get("placement")
    return placement if isinstance(placement, dict) else {}


def collocated(root: dict[str, Any]) -> bool:
    """`placement.colocation` is `cluster` (the default)."""
    return bool(placement_of(root).get("colocation", "cluster") == "cluster")


def _parts(edit: Edit) -> list[ProviderDiff]:
    """The diff parts of the new version's provider, then the old one's if it differs."""
    names = dict.fromkeys((provider_of(edit.new_root), provider_of(edit.old_root)))
    return [p for p in map(diff_of, names) if p is not None]


def _disturbed(edit: Edit) -> Verdict | None:
    for part in _parts(edit):
        verdict = part.node_change(edit)
        if verdict is not None:
            return verdict
    return None


def node_count(edit: Edit) -> Verdict | None:
    """A group's `nodes` changed: in place, unless the provider's placement says otherwise."""
    verdict = _disturbed(edit)
    if verdict is not None:
        return verdict
    part = diff_of(provider_of(edit.new_root))
    reason = part.node_count_in_place if part else None
    return (Impact.IN_PLACE, reason) if reason is not None else None


def group_added_removed(edit: Edit) -> Verdict | None:
    """An extra node group added or removed: the others stay, unless placement says otherwise."""
    if not edit.pattern.endswith("[]") or not (edit.added or edit.removed):
        return None
    verdict = _disturbed(edit)
    if verdict is not None:
        return verdict
    if edit.added:
        return Impact.IN_PLACE, "a new node group joins; existing nodes are untouched"
    return Impact.IN_PLACE, "the group's nodes are drained and removed; other groups are untouched"


def colocation(edit: Edit) -> Verdict | None:
    """`placement.colocation` changed: what each provider's generated program does with it."""
    part = diff_of(provider_of(edit.new_root))
    return part.colocation(edit) if part else None
