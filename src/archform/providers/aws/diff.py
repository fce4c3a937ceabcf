"""AWS change impact: a cluster placement group has no size.

New instances launch into the existing cluster placement group (``aws.ec2.PlacementGroup``)
and removed ones terminate alone. AWS warns that adding instances to a cluster placement
group later raises the chance of an insufficient-capacity error
(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html, "Cluster
placement groups"). An instance's placement group is chosen at launch.

Sources checked 2026-12-02.
"""

from __future__ import annotations

from typing import Any

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.placement import Verdict, collocated
from archform.diff.provider import ProviderDiff
from archform.diff.provider_base import DiffBase


def _aws_group(root: dict[str, Any]) -> bool:
    """The AWS program creates a cluster placement group (none for Capacity Blocks only)."""
    compute = root.get("compute")
    groups = [compute, *(compute.get("extra_groups") or [])] if isinstance(compute, dict) else []
    return collocated(root) and any(
        isinstance(g, dict) and g.get("purchase") != "capacity_block" for g in groups
    )


class AwsDiff(DiffBase):
    """EC2 training clusters, EKS fleets."""

    elastic_nfs = True  # EFS
    # GPU pool replaced under a new name, old one deleted with its nodes drained:
    # https://docs.aws.amazon.com/eks/latest/userguide/delete-managed-node-group.html
    node_pool = "managed node group"
    # https://docs.aws.amazon.com/eks/latest/userguide/update-cluster.html,
    # https://docs.aws.amazon.com/eks/latest/userguide/update-managed-node-group.html
    kubernetes_upgrade = (
        "the EKS control plane is upgraded in place, then each managed node group "
        "(version pinned to the cluster) rolls: new nodes join, old ones drain"
    )
    # https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html (in place)
    api_flip_in_place = "EKS updates the endpoint access"
    node_count_in_place = (
        "node count: new instances launch into the existing cluster placement group and "
        "surplus ones are drained and terminated; AWS warns that instances added to a cluster "
        "placement group later may fail with insufficient capacity"
    )

    def colocation(self, edit: Edit) -> Verdict | None:
        """The cluster placement group exists for ``cluster`` (not for Capacity Blocks only)."""
        if _aws_group(edit.old_root) != _aws_group(edit.new_root):
            return Impact.NODE_REPLACEMENT, (
                "the cluster placement group is added or removed; an instance's placement "
                "group is fixed at launch: nodes are relaunched"
            )
        return Impact.IN_PLACE, "no placement group either way: nothing changes"


DIFF: ProviderDiff = AwsDiff()
