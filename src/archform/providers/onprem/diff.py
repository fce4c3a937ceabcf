"""On-prem change impact: hosts are provisioned or drained one by one; placement is physical."""

from __future__ import annotations

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.placement import Verdict
from archform.diff.provider import ProviderDiff
from archform.diff.provider_base import DiffBase


class OnpremDiff(DiffBase):
    """Hosts the user owns."""

    node_count_in_place = (
        "node count: new hosts are provisioned and join, or surplus hosts are drained"
    )

    def colocation(self, edit: Edit) -> Verdict | None:
        """Placement is physical: nothing archform deploys changes."""
        return Impact.IN_PLACE, "on-prem placement is physical: nothing archform deploys changes"


DIFF: ProviderDiff = OnpremDiff()
