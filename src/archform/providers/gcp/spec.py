"""GCP blueprint facts and checks: GPU VPCs and RDMA subnets, GKE ranges, Filestore."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from archform.spec.networks import (
    NET,
    Block,
    RegionNetworks,
    SizeProblem,
    default_of,
    nth,
    split,
    split_bits,
)
from archform.spec.paths import Loc
from archform.spec.provider import Add, ProviderSpec
from archform.spec.provider_base import SpecBase

if TYPE_CHECKING:
    from archform.spec.catalog import Catalog
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster

DEFAULT_NETWORK = (1460, 0, 0)  # GCP default VPC MTU, no GPU VPCs
GCP_MIN_SUBNET_PREFIX = 29  # https://cloud.google.com/vpc/docs/subnets#valid-ranges
GCP_RESERVED_ADDRESSES = 4  # per primary range, same page
GKE_CONTROL_PLANE_PREFIX = 28  # master_ipv4_cidr_block is a /28


def gpu_network(catalog: Catalog, machine_type: str | None) -> tuple[int, int, int]:
    """(MTU, extra gVNIC VPCs, RDMA subnets) a GCP machine type needs."""
    info = catalog.instance(machine_type) if machine_type else None
    if info is None or info.mtu is None:
        return DEFAULT_NETWORK
    return (info.mtu, info.gpu_vpcs, info.rdma_subnets)


@dataclass(frozen=True, slots=True)
class GcpTrainingNetworks:
    """The ranges of a GCP training cluster: system subnet, PSA, GPU and RDMA subnets."""

    system: str
    psa: str
    psa_field: Loc
    gvnic: list[str]
    rdma: list[str]
    mtu: int


def gcp_training(cluster: TrainingCluster, catalog: Catalog) -> GcpTrainingNetworks:
    """Where each GCP training range comes from (sizes checked by `size_problems`)."""
    net = cluster.placement.network
    system, upper = split(net.cidr, 2)
    mtu, gvnic, rdma = gpu_network(catalog, cluster.compute.instance_type)
    # Every node group shares one layout (spec.buildable), so the first group's counts hold.
    return GcpTrainingNetworks(
        system=system,
        psa=net.psa_cidr or upper,
        psa_field=(*NET, "psa_cidr") if net.psa_cidr else (*NET, "cidr"),
        gvnic=split(net.gpu_cidr, gvnic) if gvnic else [],
        rdma=split(net.rdma_cidr, rdma) if rdma else [],
        mtu=mtu,
    )


class Gcp(SpecBase):
    """Google Cloud: GCE training clusters, GKE fleets, a GCS model registry."""

    name = "gcp"
    label = "GCP"
    article = "a"
    cloud = True
    fleets = True
    registry_scheme = "gs"
    filestore = True
    example_instance = "a3-megagpu-8g"
    example_small_gpu = "g2-standard-4"
    placement_mechanism = "a COLLOCATED compact placement policy"
    sdk_extra = "gcp"
    vendor = "Google Cloud"
    training_subnets = 2
    static_compute_hosts = True
    host_room_checked = True
    existing_network_refusal = "GPU clusters need their own system and GPU VPCs"
    zones_per_instance = True
    deployer_network = (
        re.compile(r"^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/locations/global/hubs/[a-z0-9-]+$"),
        "a Network Connectivity Center hub, projects/<project>/locations/global/hubs/<hub>",
    )
    control_plane_cidr = "10.99.0.0/24"
    network_fields = frozenset({"gpu_cidr", "rdma_cidr", "psa_cidr", "control_plane_cidr"})
    unused_network_fields = MappingProxyType(
        {
            "service_cidr": "GKE takes Services from each region's block of `cidr`",
            "pod_cidr": "GKE takes pods from each region's block of `cidr`",
        }
    )
    # What blueprint fields mean on GCP (the schema's descriptions).
    field_docs = MappingProxyType(
        {
            "network.cidr": "the system VPC's subnet is its lower half and, without psa_cidr, "
            "private services access its upper half",
            "network.gpu_cidr": "the block the GPU VPCs' subnets are carved from, in equal "
            "parts (a3-megagpu-8g: 8 x /19 from a /16)",
            "network.rdma_cidr": "the block the RDMA VPC's subnets are carved from, in equal "
            "parts (a3-ultragpu-8g, a4-highgpu-8g: 8 x /19 from a /16)",
            "network.psa_cidr": "the private services access range Filestore and Managed "
            "Lustre are peered into (default: the upper half of `cidr`)",
            "storage.filestore_tier": "`kind: nfs`: the Filestore service tier; its capacity "
            "range is checked (default BASIC_SSD)",
            "network.control_plane_cidr": "region i's GKE control plane gets the i-th /28 of "
            f"this block, default {control_plane_cidr}",
            "deployer.network": "a Network Connectivity Center hub "
            "(projects/P/locations/global/hubs/H; every cluster VPC becomes a spoke)",
        }
    )
    # SkyPilot's `cloud: gcp` (sky/clouds/); its GCP catalog names the A3 Mega H100
    # "H100-MEGA" (a3-megagpu-8g), and plain "H100" on GCP is a3-highgpu-8g.
    skypilot_cloud = "gcp"
    skypilot_accelerators = MappingProxyType(
        {"H100-MEGA": ("H100", "a3-megagpu-8g"), "H100": ("H100", "a3-highgpu-8g")}
    )
    # Product names users write for a generic kind (validate's did-you-mean).
    product_kinds = MappingProxyType(
        {
            "managed_lustre": "lustre",
            "filestore": "nfs",
            "gcs": "object",
            "tcpxo": "gpudirect_tcpxo",
            "tcpx": "gpudirect_tcpx",
        }
    )

    def training_blocks(self, cluster: TrainingCluster, catalog: Catalog) -> list[Block]:
        """System subnet, private services access range, GPU VPC and RDMA subnets."""
        net = cluster.placement.network
        g = gcp_training(cluster, catalog)
        blocks = [
            Block("the system subnet", g.system, (*NET, "cidr"), parent=net.cidr),
            Block(
                "the private services access range",
                g.psa,
                g.psa_field,
                parent=net.psa_cidr or net.cidr,
            ),
        ]
        blocks += [
            Block(f"GPU VPC {i}'s subnet", c, (*NET, "gpu_cidr"), False, parent=net.gpu_cidr)
            for i, c in enumerate(g.gvnic)
        ]
        blocks += [
            Block(f"RDMA subnet {i}", c, (*NET, "rdma_cidr"), False, parent=net.rdma_cidr)
            for i, c in enumerate(g.rdma)
        ]
        return blocks

    def training_defaults(
        self, cluster: TrainingCluster, catalog: Catalog
    ) -> dict[str, str | None]:
        """The private services access range, the upper half of `cidr` when unset."""
        return {"psa_cidr": gcp_training(cluster, catalog).psa}

    def fleet_region(self, block: str, index: int, control: str | None) -> RegionNetworks:
        """Node subnet, Services and pods secondary ranges, a GKE control plane /28."""
        assert control is not None
        return RegionNetworks(
            block=block,
            nodes=nth(block, 20, 0),
            services=nth(block, 20, 2),
            pods=nth(block, 17, 1),
            control_plane=nth(control, GKE_CONTROL_PLANE_PREFIX, index),
            control_plane_what="GKE control plane",
        )

    def training_size_problems(
        self, cluster: TrainingCluster, catalog: Catalog
    ) -> list[SizeProblem]:
        """GPU VPC and RDMA blocks that cannot hold one subnet per network of every node."""
        net = cluster.placement.network
        _, gvnic, rdma = gpu_network(catalog, cluster.compute.instance_type)
        nodes = cluster.compute.total_nodes
        out = []
        for name, count, what in (("gpu_cidr", gvnic, "GPU VPC"), ("rdma_cidr", rdma, "RDMA")):
            if not count:
                continue
            cidr = getattr(net, name)
            prefix = ipaddress.IPv4Network(cidr).prefixlen + split_bits(count)
            usable = 2 ** (32 - prefix) - GCP_RESERVED_ADDRESSES if prefix <= 32 else 0
            if prefix > GCP_MIN_SUBNET_PREFIX or usable < nodes:
                out.append(
                    SizeProblem(
                        (*NET, name),
                        f"{cidr} cannot hold {count} {what} subnets of {nodes} nodes each "
                        f"({cluster.compute.instance_type}: one subnet per {what} network)",
                        f"use a larger block, e.g. a /16 (default {default_of(name)})",
                    )
                )
        return out

    def fleet_size_problems(self, fleet: InferenceFleet) -> list[SizeProblem]:
        """A control-plane block without one /28 per region."""
        net = fleet.placement.network
        regions = len(fleet.placement.all_regions)
        control = ipaddress.IPv4Network(net.control_plane_cidr or self.control_plane_cidr)
        room = GKE_CONTROL_PLANE_PREFIX - control.prefixlen
        if room >= 0 and 2**room >= regions:
            return []
        return [
            SizeProblem(
                (*NET, "control_plane_cidr"),
                f"{control} does not hold one /28 GKE control plane per region ({regions} regions)",
                "use a block of at least one /28 per region, e.g. 10.99.0.0/24",
            )
        ]

    def check_training(self, add: Add, catalog: Catalog, cluster: TrainingCluster) -> None:
        """GPU node groups share one GPU network layout; CPU groups use the system VPC only."""
        from archform.spec.buildable import group_loc

        # A group without `gpu` after the catalog defaults (spec.defaults) has no GPUs.
        gpu_groups = [(i, g) for i, g in enumerate(cluster.compute.groups) if g.gpu is not None]
        if not gpu_groups:
            return
        first_type = gpu_groups[0][1].instance_type
        first = gpu_network(catalog, first_type)
        for i, group in gpu_groups[1:]:
            if gpu_network(catalog, group.instance_type) != first:
                add(
                    (*group_loc(cluster, i), "instance_type"),
                    f"{group.instance_type} needs a different GPU network layout than "
                    f"{first_type} (GPU VPCs, RDMA subnets, MTU)",
                    "put machine families with different NIC layouts in separate clusters",
                    "value",
                )

    def check_fleet(self, add: Add, catalog: Catalog, fleet: InferenceFleet) -> None:
        """The GPU pool's machine type has a known GKE accelerator type."""
        gpu = fleet.gpu_pool.gpu
        itype = fleet.gpu_pool.instance_type
        if catalog.gke_accelerator(itype, gpu.model if gpu else None) is None:
            add(
                ("gpu_pool", "instance_type"),
                f"no GKE accelerator type is known for {itype}"
                + (f" with {gpu.model} GPUs" if gpu else ""),
                "use a GPU machine type of archform's catalog (a2-, a3-, a4-, g2-), or a GPU "
                "model the catalog knows in gpu_pool.gpu.model",
                "value",
            )


SPEC: ProviderSpec = Gcp()
