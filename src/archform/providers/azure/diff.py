"""Azure change impact: a node group is one Uniform scale set.

Its node count is the scale set's ``sku.capacity``, changed in place: scale-out adds VMs,
scale-in deletes VMs
(https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-scale-in-policy);
the 100-VM limit of a single placement group is refused when the blueprint loads. The scale
set always has singlePlacementGroup=true and platformFaultDomainCount=1
(this package's templates/pulumi/), whatever colocation says. A classic private AKS cluster
is chosen at creation (https://learn.microsoft.com/azure/aks/private-clusters).

Sources checked 2026-12-02.
"""

from __future__ import annotations

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.placement import Verdict
from archform.diff.provider import ProviderDiff
from archform.diff.provider_base import DiffBase


class AzureDiff(DiffBase):
    """Scale set training clusters, AKS fleets."""

    lustre_grows = False
    # https://learn.microsoft.com/azure/aks/delete-node-pool
    node_pool = "agent pool"
    # https://learn.microsoft.com/azure/aks/upgrade-aks-cluster
    kubernetes_upgrade = (
        "the AKS control plane is upgraded, then each agent pool surge-upgrades "
        "(orchestrator version pinned to the cluster)"
    )
    # https://learn.microsoft.com/azure/aks/private-clusters (a classic private cluster is
    # chosen at creation: the cluster is recreated)
    api_flip_recreates = (
        "the AKS API server becomes {to}: a classic private cluster is chosen at "
        "creation, so every regional cluster is recreated"
    )
    node_count_in_place = (
        "node count is the scale set's capacity, changed in place: VMs are added, or "
        "surplus VMs are drained and deleted"
    )

    def colocation(self, edit: Edit) -> Verdict | None:
        """Always one scale set with a single placement group."""
        return Impact.IN_PLACE, (
            "archform's Azure node group is always one scale set with a single placement "
            "group (InfiniBand needs it), whatever colocation says: nothing changes"
        )


DIFF: ProviderDiff = AzureDiff()
