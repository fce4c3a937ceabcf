"""`DiffBase`: the defaults of `ProviderDiff` (generic words, no provider verdicts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from archform.diff.changes import Edit
    from archform.diff.provider import Verdict


class DiffBase:
    """A provider subclasses this and says how its programs take each change."""

    elastic_nfs: bool = False
    lustre_grows: bool = True
    node_pool: str = "node pool"
    kubernetes_upgrade: str | None = None
    api_flip_in_place: str | None = None
    api_flip_recreates: str | None = None
    node_count_in_place: str | None = None

    def node_change(self, edit: Edit) -> Verdict | None:
        """Nodes are added and removed one by one."""
        return None

    def colocation(self, edit: Edit) -> Verdict | None:
        """No verdict: the row's own stands."""
        return None
