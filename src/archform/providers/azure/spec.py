"""Azure blueprint facts and checks: scale sets with InfiniBand, AKS overlay ranges."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import TYPE_CHECKING

from archform.spec.networks import NET, Block, RegionNetworks, nth
from archform.spec.provider import Add, ProviderSpec
from archform.spec.provider_base import SpecBase

if TYPE_CHECKING:
    from archform.spec.catalog import Catalog
    from archform.spec.models.training import TrainingCluster


def scale_set_max_vms(catalog: Catalog) -> int:
    """Most VMs of one scale set with a single placement group (catalog services)."""
    entry = catalog.services.get("azure_scale_set") or {}
    return int(entry.get("single_placement_group_max_vms", 100))


class Azure(SpecBase):
    """Microsoft Azure: VM scale set training clusters, AKS fleets; no model registry yet."""

    name = "azure"
    label = "Azure"
    article = "an"
    cloud = True
    fleets = True
    example_instance = "Standard_ND96isr_H100_v5"
    example_small_gpu = "Standard_NC4as_T4_v3"
    placement_mechanism = "one VM scale set with singlePlacementGroup"
    sdk_extra = "azure"
    vendor = "Azure"
    training_subnets = 4
    host_room_checked = True
    existing_network_refusal = "archform creates the VNet of Azure clusters"
    # Front Door's own *.azurefd.net name comes with Front Door's certificate.
    edge_has_own_name = True
    deployer_network = (
        re.compile(
            r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[^/]+/providers/"
            r"Microsoft\.Network/virtualNetworks/[^/]+$",
            re.IGNORECASE,
        ),
        "a virtual network resource id, /subscriptions/<id>/resourceGroups/<rg>/providers/"
        "Microsoft.Network/virtualNetworks/<name>",
    )
    service_cidr = "172.30.0.0/16"
    pod_cidr = "172.31.0.0/16"
    network_fields = frozenset({"service_cidr", "pod_cidr"})
    unused_network_fields = MappingProxyType({"gpu_cidr": "InfiniBand needs no IP subnets"})
    # What blueprint fields mean on Azure (the schema's descriptions).
    field_docs = MappingProxyType(
        {
            "network.cidr": "the VNet (node and Lustre subnets)",
            "network.service_cidr": f"default {service_cidr}",
            "network.pod_cidr": f"Azure CNI overlay, default {pod_cidr}",
            "model.source_account_id": "resource id of the storage account `source` names "
            "(/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.Storage/"
            "storageAccounts/<account>); the stage Job and the serving pods get Storage Blob "
            "Data Reader on it. Required when `source` is an Azure blob URL",
            "deployer.network": "a virtual network resource id (peered with every cluster VNet)",
            "edge.domain": "Front Door also serves its own *.azurefd.net name",
        }
    )
    # SkyPilot's `cloud: azure` (sky/clouds/).
    skypilot_cloud = "azure"
    # Product names users write for a generic kind (validate's did-you-mean).
    product_kinds = MappingProxyType({"amlfs": "lustre", "azure_files": "nfs", "blob": "object"})

    def training_blocks(self, cluster: TrainingCluster, catalog: Catalog) -> list[Block]:
        """The cluster VNet."""
        net = cluster.placement.network
        if net.existing_vpc_id:
            return []
        return [Block("the cluster VNet", net.cidr, (*NET, "cidr"))]

    def fleet_region(self, block: str, index: int, control: str | None) -> RegionNetworks:
        """A node subnet and a private endpoints subnet."""
        return RegionNetworks(block=block, nodes=nth(block, 17, 0), endpoints=nth(block, 24, 128))

    def check_training(self, add: Add, catalog: Catalog, cluster: TrainingCluster) -> None:
        """Scale sets: no capacity reservation group, at most one placement group's VMs."""
        from archform.spec.buildable import group_loc

        limit = scale_set_max_vms(catalog)
        for i, group in enumerate(cluster.compute.groups):
            if group.capacity_reservation_id:
                # Uniform scale sets join a capacity reservation group only with
                # singlePlacementGroup=false, and InfiniBand needs a single placement group.
                # https://learn.microsoft.com/en-us/azure/virtual-machines/capacity-reservation-associate-virtual-machine-scale-set
                add(
                    (*group_loc(cluster, i), "capacity_reservation_id"),
                    f"node group {group.name!r}: an Azure capacity reservation group cannot "
                    "hold an InfiniBand scale set (it needs singlePlacementGroup=false)",
                    "remove capacity_reservation_id; `purchase: reserved` on Azure means "
                    "Reserved VM Instances, a billing discount applied without any id",
                    "key",
                )
            if group.nodes > limit:
                add(
                    (*group_loc(cluster, i), "nodes"),
                    f"{group.nodes} nodes in one Azure scale set; a scale set with a single "
                    f"placement group (one InfiniBand domain) holds at most {limit}",
                    f"split the nodes into extra_groups of at most {limit} nodes each",
                    "value",
                )


SPEC: ProviderSpec = Azure()
