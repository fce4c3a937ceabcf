"""Every address range archform carves, each from the blueprint field that determines it.

The renderers build their networks from these layouts and nothing else, and validate
refuses any two ranges that overlap, at the field that determined the second one, so what
validate passed is what the generated programs create.

Why overlap is refused (read 2026-12-02):
- GCP: "A network interface must connect to a subnet that has an IP address range that does
  not overlap with the IP address range of another interface on the same instance"
  (https://cloud.google.com/vpc/docs/create-use-multiple-interfaces): the system, GPU and
  RDMA subnets of one node are pairwise disjoint. The private services access range and a
  GKE control plane /28 live in networks peered with the VPC, and peered networks cannot
  share subnet ranges (https://cloud.google.com/vpc/docs/vpc-peering).
- EKS: the Service range "doesn't overlap with any CIDR block assigned to the VPC", lies in
  RFC 1918 space and is /24 to /12; unset, EKS picks 10.100.0.0/16 or 172.20.0.0/16
  (https://docs.aws.amazon.com/eks/latest/APIReference/API_KubernetesNetworkConfigRequest.html).
- AKS (Azure CNI overlay): pods take a private range "logically different from the VNet",
  which "can be reused in different AKS clusters"
  (https://learn.microsoft.com/azure/aks/azure-cni-overlay): the pod and Service ranges
  must stay clear of the VNets, each other and the deployer, not of other clusters' ones.
- Networks connected to the deployer's (transit gateway, peering, NCC) cannot share
  addresses with it, and a Platform's two tiers are connected through it.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from archform.spec.catalog import Catalog
from archform.spec.paths import Loc

if TYPE_CHECKING:  # lint imports only the models it reads
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster

NET: Loc = ("placement", "network")
DEFAULT_NETWORK = (1460, 0, 0)  # GCP default VPC MTU, no GPU VPCs
GCP_MIN_SUBNET_PREFIX = 29  # https://cloud.google.com/vpc/docs/subnets#valid-ranges
GCP_RESERVED_ADDRESSES = 4  # per primary range, same page
REGION_PREFIX = 16  # one /16 per fleet region
GKE_CONTROL_PLANE_PREFIX = 28  # master_ipv4_cidr_block is a /28
# Provider defaults of the fields whose default depends on the provider (None in the model).
SERVICE_CIDR = {"aws": "172.20.0.0/16", "azure": "172.30.0.0/16"}
POD_CIDR = {"azure": "172.31.0.0/16"}
CONTROL_PLANE_CIDR = {"gcp": "10.99.0.0/24"}
# Fields that apply to some providers only: (loc, providers, why not elsewhere).
TRAINING_ONLY = {
    "gpu_cidr": ("gcp",),
    "rdma_cidr": ("gcp",),
    "psa_cidr": ("gcp",),
}
FLEET_ONLY = {
    "service_cidr": ("aws", "azure"),
    "pod_cidr": ("azure",),
    "control_plane_cidr": ("gcp",),
}
NOT_USED = {
    ("gpu_cidr", "aws"): "EFA interfaces share the VPC",
    ("gpu_cidr", "azure"): "InfiniBand needs no IP subnets",
    ("service_cidr", "gcp"): "GKE takes Services from each region's block of `cidr`",
    ("pod_cidr", "gcp"): "GKE takes pods from each region's block of `cidr`",
    ("pod_cidr", "aws"): "EKS pods take addresses in the VPC subnets (VPC CNI)",
}


@dataclass(frozen=True, slots=True)
class Block:
    """One carved range: what it is, its CIDR, and the blueprint field it comes from."""

    what: str
    cidr: str
    field: Loc
    routable: bool = True  # reachable from networks connected to this one
    external: bool = False  # not carved by archform (the deployer's own range)
    parent: str = ""  # the field's value it was carved from ("": the range itself)

    @property
    def net(self) -> ipaddress.IPv4Network:
        """The range as a network object."""
        return ipaddress.IPv4Network(self.cidr)


def split(cidr: str, count: int) -> list[str]:
    """`cidr` in equal parts (a power of two at least 2 and at least `count`), first `count`."""
    net = ipaddress.IPv4Network(cidr)
    bits = split_bits(count)
    return [str(s) for s in net.subnets(prefixlen_diff=bits)][:count]


def split_bits(count: int) -> int:
    """Prefix bits `split` adds for `count` parts."""
    return max(1, math.ceil(math.log2(max(count, 2))))


def nth(cidr: str, prefix: int, index: int) -> str:
    """The `index`-th /`prefix` block of `cidr`."""
    net = ipaddress.IPv4Network(cidr)
    size = 2 ** (32 - prefix)
    return str(ipaddress.IPv4Network((int(net.network_address) + index * size, prefix)))


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


def training_blocks(cluster: TrainingCluster, catalog: Catalog) -> list[Block]:
    """Every range a cloud training cluster's program creates."""
    provider = cluster.placement.provider
    net = cluster.placement.network
    if provider == "gcp":
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
    if provider in ("aws", "azure") and not net.existing_vpc_id:
        word = "VPC" if provider == "aws" else "VNet"
        return [Block(f"the cluster {word}", net.cidr, (*NET, "cidr"))]
    return []


@dataclass(frozen=True, slots=True)
class RegionNetworks:
    """One fleet region's ranges; each provider's program reads the ones it creates."""

    block: str
    nodes: str  # gcp: node subnet; azure: node subnet
    pods: str | None = None  # gcp: pods secondary range
    services: str | None = None  # gcp: Services secondary range
    control_plane: str | None = None  # gcp: GKE control plane /28
    endpoints: str | None = None  # azure: private endpoints subnet
    public: list[str] = field(default_factory=list)  # aws: one per zone
    private: list[str] = field(default_factory=list)  # aws: one per zone (nodes)


@dataclass(frozen=True, slots=True)
class FleetNetworks:
    """Every fleet range: per region, and the cluster-wide Service and pod ranges."""

    regions: list[RegionNetworks]
    service_cidr: str | None
    pod_cidr: str | None
    dns_service_ip: str | None


AWS_ZONES = 3  # the fleet program spreads each region's VPC over its first 3 zones


def fleet_networks(fleet: InferenceFleet) -> FleetNetworks:
    """Each region's ranges: region i is the i-th /16 of placement.network.cidr."""
    provider = fleet.placement.provider
    net = fleet.placement.network
    control = net.control_plane_cidr or CONTROL_PLANE_CIDR.get(provider)
    regions = []
    for i in range(len(fleet.placement.all_regions)):
        block = nth(net.cidr, REGION_PREFIX, i)
        if provider == "gcp":
            assert control is not None
            regions.append(
                RegionNetworks(
                    block=block,
                    nodes=nth(block, 20, 0),
                    services=nth(block, 20, 2),
                    pods=nth(block, 17, 1),
                    control_plane=nth(control, GKE_CONTROL_PLANE_PREFIX, i),
                )
            )
        elif provider == "aws":
            regions.append(
                RegionNetworks(
                    block=block,
                    nodes=nth(block, 19, 2),
                    public=[nth(block, 20, z) for z in range(AWS_ZONES)],
                    private=[nth(block, 19, 2 + z) for z in range(AWS_ZONES)],
                )
            )
        else:
            regions.append(
                RegionNetworks(block=block, nodes=nth(block, 17, 0), endpoints=nth(block, 24, 128))
            )
    service = net.service_cidr or SERVICE_CIDR.get(provider)
    dns = str(ipaddress.IPv4Network(service).network_address + 10) if service else None
    return FleetNetworks(regions, service, net.pod_cidr or POD_CIDR.get(provider), dns)


def fleet_blocks(fleet: InferenceFleet) -> list[Block]:
    """Every range a fleet's program creates, and the deployer's connected ranges."""
    provider = fleet.placement.provider
    net = fleet.placement.network
    nets = fleet_networks(fleet)
    blocks = []
    for region, r in zip(fleet.placement.all_regions, nets.regions, strict=True):
        blocks.append(Block(f"{region}'s network", r.block, (*NET, "cidr"), parent=net.cidr))
        if r.control_plane:
            field = (*NET, "control_plane_cidr")
            control = net.control_plane_cidr or CONTROL_PLANE_CIDR[provider]
            blocks.append(
                Block(f"{region}'s GKE control plane", r.control_plane, field, parent=control)
            )
    if nets.service_cidr:
        field = (*NET, "service_cidr")
        blocks.append(Block("the Kubernetes Service range", nets.service_cidr, field, False))
    if nets.pod_cidr:
        blocks.append(Block("the pod range", nets.pod_cidr, (*NET, "pod_cidr"), False))
    deployer = fleet.kubernetes.deployer
    if deployer is not None and deployer.network is not None:
        where: Loc = ("kubernetes", "deployer", "cidrs")
        blocks += [
            Block("the deployer's range", c, (*where, j), routable=False, external=True)
            for j, c in enumerate(deployer.cidrs)
        ]
    return blocks


def overlapping(
    blocks: Sequence[Block], others: Sequence[Block] | None = None
) -> Iterator[tuple[Block, Block]]:
    """Pairs of overlapping ranges: within `blocks`, or between `blocks` and `others`.

    Ranges carved from one field of one document are disjoint by construction and two
    external ranges are not archform's to place, so neither kind of pair is compared.
    """
    if others is None:
        pairs = ((a, b) for j, b in enumerate(blocks) for a in blocks[:j] if a.field != b.field)
    else:
        pairs = ((a, b) for a in blocks for b in others)
    for a, b in pairs:
        if a.external and b.external:
            continue
        if a.net.overlaps(b.net):
            yield a, b


@dataclass(frozen=True, slots=True)
class SizeProblem:
    """A field whose block cannot hold what archform carves from it."""

    field: Loc
    message: str
    hint: str


def _explicit(model: Any, name: str) -> bool:
    """Set to something other than its default (the resolved blueprint writes defaults)."""
    default = type(model).model_fields[name].default
    return name in model.model_fields_set and getattr(model, name) != default


def training_size_problems(cluster: TrainingCluster, catalog: Catalog) -> list[SizeProblem]:
    """Fields set for a provider that does not use them; GPU/RDMA blocks too small."""
    provider = cluster.placement.provider
    net = cluster.placement.network
    out = []
    for name, providers in TRAINING_ONLY.items():
        if provider not in providers and _explicit(net, name):
            why = NOT_USED.get((name, provider), f"archform carves no such range on {provider}")
            out.append(
                SizeProblem(
                    (*NET, name),
                    f"applies to {' and '.join(providers)} clusters only",
                    f"remove it: {why}",
                )
            )
    if provider != "gcp":
        return out
    _, gvnic, rdma = gpu_network(catalog, cluster.compute.instance_type)
    nodes = cluster.compute.total_nodes
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
                    f"use a larger block, e.g. a /16 (default {_default(name)})",
                )
            )
    return out


def fleet_size_problems(fleet: InferenceFleet) -> list[SizeProblem]:
    """Fields set for a provider that does not use them; blocks too small or not allowed."""
    provider = fleet.placement.provider
    net = fleet.placement.network
    regions = len(fleet.placement.all_regions)
    out = []
    for name, providers in FLEET_ONLY.items():
        if provider not in providers and _explicit(net, name):
            why = NOT_USED.get((name, provider), f"archform carves no such range on {provider}")
            out.append(
                SizeProblem(
                    (*NET, name),
                    f"applies to {' and '.join(providers)} fleets only",
                    f"remove it: {why}",
                )
            )
    cidr = ipaddress.IPv4Network(net.cidr)
    if cidr.prefixlen > REGION_PREFIX or 2 ** (REGION_PREFIX - cidr.prefixlen) < regions:
        out.append(
            SizeProblem(
                (*NET, "cidr"),
                f"{net.cidr} does not hold one /{REGION_PREFIX} per region ({regions} regions)",
                f"use a block of at least {regions} x /{REGION_PREFIX}, e.g. 10.100.0.0/14",
            )
        )
    if provider == "gcp":
        control = ipaddress.IPv4Network(net.control_plane_cidr or CONTROL_PLANE_CIDR["gcp"])
        room = GKE_CONTROL_PLANE_PREFIX - control.prefixlen
        if room < 0 or 2**room < regions:
            out.append(
                SizeProblem(
                    (*NET, "control_plane_cidr"),
                    f"{control} does not hold one /28 GKE control plane per region "
                    f"({regions} regions)",
                    "use a block of at least one /28 per region, e.g. 10.99.0.0/24",
                )
            )
    if provider == "aws" and net.service_cidr:
        service = ipaddress.IPv4Network(net.service_cidr)
        private = [ipaddress.IPv4Network(p) for p in ("10.0.0.0/8", "172.16.0.0/12")]
        private.append(ipaddress.IPv4Network("192.168.0.0/16"))
        if not 12 <= service.prefixlen <= 24 or not any(service.subnet_of(p) for p in private):
            out.append(
                SizeProblem(
                    (*NET, "service_cidr"),
                    f"EKS takes a Service range of /24 to /12 inside 10.0.0.0/8, "
                    f"172.16.0.0/12 or 192.168.0.0/16, not {net.service_cidr}",
                    "use e.g. 172.20.0.0/16 (the EKS API reference, serviceIpv4Cidr)",
                )
            )
    return out


def _default(name: str) -> str:
    from archform.spec.models.training import Network

    return str(Network.model_fields[name].default)


def used_defaults(model: object, catalog: Catalog) -> dict[str, str]:
    """placement.network fields left unset (None) that the generated programs fill: {field: CIDR}.

    The resolved blueprint shows these, so it names every range actually created; a field the
    provider does not use stays unset.
    """
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster

    used: dict[str, str | None] = {}
    if isinstance(model, TrainingCluster) and model.placement.provider == "gcp":
        used["psa_cidr"] = gcp_training(model, catalog).psa
    elif isinstance(model, InferenceFleet):
        provider = model.placement.provider
        nets = fleet_networks(model)
        used["service_cidr"] = nets.service_cidr
        used["pod_cidr"] = nets.pod_cidr
        used["control_plane_cidr"] = (
            model.placement.network.control_plane_cidr or CONTROL_PLANE_CIDR.get(provider)
        )
    net = getattr(getattr(model, "placement", None), "network", None)
    return {k: v for k, v in used.items() if v is not None and getattr(net, k, None) is None}
