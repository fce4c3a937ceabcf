"""Structural comparison of two resolved blueprint documents.

Documents are compared as their resolved models (catalog defaults filled in), dumped to
plain JSON values, so a change the loader derives (an instance type that brings another GPU
model) shows up as what will actually be deployed. Lists of named things (storage, node
groups, partitions, hosts, suppressions) are matched by their name, so reordering them is
no change and a renamed entry is a removal plus an addition. Other lists (zones, regions,
CIDRs, health checks) are compared as whole values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Normalised list path -> the key that identifies an entry.
KEYED_LISTS: dict[str, str] = {
    "storage": "name",
    "compute.extra_groups": "name",
    "scheduler.partitions": "name",
    "hosts.compute": "name",
    "hosts.login": "name",
    "lint.ignore": "rule",
}


@dataclass(frozen=True, slots=True)
class Edit:
    """One difference: where it is, what it was, what it becomes.

    `path` names list entries by key (``storage[datasets].capacity_tib``); `pattern` is the
    same path with keys erased (``storage[].capacity_tib``), which the policy table matches.
    `old`/`new` is None when the value (or the list entry) is absent on that side.
    """

    path: str
    pattern: str
    loc: tuple[str, ...]
    old: Any
    new: Any
    old_root: dict[str, Any]
    new_root: dict[str, Any]

    @property
    def added(self) -> bool:
        """The value (or entry) exists only in the new version."""
        return self.old is None and self.new is not None

    @property
    def removed(self) -> bool:
        """The value (or entry) exists only in the old version."""
        return self.old is not None and self.new is None

    def sibling(self, name: str, *, new: bool = True) -> Any:
        """A field beside this one (same parent), on the new (or old) side."""
        node: Any = self.new_root if new else self.old_root
        for part in self.loc[:-1]:
            node = _step(node, part)
            if node is None:
                return None
        return node.get(name) if isinstance(node, dict) else None


def _step(node: Any, part: str) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and part.startswith("[") and part.endswith("]"):
        key = part[1:-1]
        for item in node:
            if isinstance(item, dict) and key in (str(item.get("name")), str(item.get("rule"))):
                return item
    return None


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[Edit]:
    """Every difference between two dumped documents, in field order."""
    out: list[Edit] = []
    _walk(old, new, (), "", "", out, old, new)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(
    old: Any,
    new: Any,
    loc: tuple[str, ...],
    path: str,
    pattern: str,
    out: list[Edit],
    old_root: dict[str, Any],
    new_root: dict[str, Any],
) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        keys = list(new) + [k for k in old if k not in new]
        for key in keys:
            _walk(
                old.get(key),
                new.get(key),
                (*loc, key),
                _join(path, key),
                _join(pattern, key),
                out,
                old_root,
                new_root,
            )
        return
    id_key = KEYED_LISTS.get(pattern)
    if id_key and isinstance(old, list) and isinstance(new, list):
        old_items = _keyed(old, id_key)
        new_items = _keyed(new, id_key)
        if old_items is not None and new_items is not None:
            for key in list(old_items) + [k for k in new_items if k not in old_items]:
                _walk(
                    old_items.get(key),
                    new_items.get(key),
                    (*loc, f"[{key}]"),
                    f"{path}[{key}]",
                    f"{pattern}[]",
                    out,
                    old_root,
                    new_root,
                )
            return
    if old != new:
        out.append(Edit(path, pattern, loc, old, new, old_root, new_root))


def _keyed(items: list[Any], id_key: str) -> dict[str, Any] | None:
    """Entries by key, or None when some entry has no key or a key repeats."""
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or id_key not in item:
            return None
        key = str(item[id_key])
        if key in out:
            return None
        out[key] = item
    return out
