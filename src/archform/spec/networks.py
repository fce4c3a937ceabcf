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
from functools import partial
from typing import TYPE_CHECKING, Any

from archform.spec.catalog import Catalog
from archform.spec.paths import Loc
from archform.spec.provider import ProviderSpec, names_where, spec_of

if TYPE_CHECKING:  # lint imports only the models it reads
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster

NET: Loc = ("placement", "network")
REGION_PREFIX = 16  # one /16 per fleet region
# Network fields only some providers read (each provider's spec.network_fields says which).
TRAINING_FIELDS = ("gpu_cidr", "rdma_cidr", "psa_cidr")
FLEET_FIELDS = ("service_cidr", "pod_cidr", "control_plane_cidr")


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


def training_blocks(cluster: TrainingCluster, catalog: Catalog) -> list[Block]:
    """Every range a cloud training cluster's program creates."""
    return spec_of(cluster.placement.provider).training_blocks(cluster, catalog)


@dataclass(frozen=True, slots=True)
class RegionNetworks:
    """One fleet region's ranges; each provider's program reads the ones it creates."""

    block: str
    nodes: str  # the node subnet
    pods: str | None = None  # a pods secondary range
    services: str | None = None  # a Services secondary range
    control_plane: str | None = None  # a managed control plane's own range
    control_plane_what: str = "control plane"  # its name in messages
    endpoints: str | None = None  # a private endpoints subnet
    public: list[str] = field(default_factory=list)  # one per zone
    private: list[str] = field(default_factory=list)  # one per zone (nodes)


@dataclass(frozen=True, slots=True)
class FleetNetworks:
    """Every fleet range: per region, and the cluster-wide Service and pod ranges."""

    regions: list[RegionNetworks]
    service_cidr: str | None
    pod_cidr: str | None
    dns_service_ip: str | None


def fleet_networks(fleet: InferenceFleet) -> FleetNetworks:
    """Each region's ranges: region i is the i-th /16 of placement.network.cidr."""
    spec = spec_of(fleet.placement.provider)
    net = fleet.placement.network
    control = net.control_plane_cidr or spec.control_plane_cidr
    regions = [
        spec.fleet_region(nth(net.cidr, REGION_PREFIX, i), i, control)
        for i in range(len(fleet.placement.all_regions))
    ]
    service = net.service_cidr or spec.service_cidr
    dns = str(ipaddress.IPv4Network(service).network_address + 10) if service else None
    return FleetNetworks(regions, service, net.pod_cidr or spec.pod_cidr, dns)


def fleet_blocks(fleet: InferenceFleet) -> list[Block]:
    """Every range a fleet's program creates, and the deployer's connected ranges."""
    net = fleet.placement.network
    nets = fleet_networks(fleet)
    blocks = []
    for region, r in zip(fleet.placement.all_regions, nets.regions, strict=True):
        blocks.append(Block(f"{region}'s network", r.block, (*NET, "cidr"), parent=net.cidr))
        if r.control_plane:
            field = (*NET, "control_plane_cidr")
            control = net.control_plane_cidr or spec_of(fleet.placement.provider).control_plane_cidr
            what = f"{region}'s {r.control_plane_what}"
            blocks.append(Block(what, r.control_plane, field, parent=str(control)))
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


def _reads(name: str, spec: ProviderSpec) -> bool:
    return name in spec.network_fields


def _unused(net: Any, provider: str, fields: tuple[str, ...], what: str) -> Iterator[SizeProblem]:
    """A field set on a provider that does not read it, for each such field."""
    spec = spec_of(provider)
    for name in fields:
        if name not in spec.network_fields and _explicit(net, name):
            readers = names_where(partial(_reads, name))
            why = spec.unused_network_fields.get(
                name, f"archform carves no such range on {provider}"
            )
            yield SizeProblem(
                (*NET, name),
                f"applies to {' and '.join(readers)} {what} only",
                f"remove it: {why}",
            )


def training_size_problems(cluster: TrainingCluster, catalog: Catalog) -> list[SizeProblem]:
    """Fields set for a provider that does not use them; GPU/RDMA blocks too small."""
    provider = cluster.placement.provider
    out = list(_unused(cluster.placement.network, provider, TRAINING_FIELDS, "clusters"))
    return out + spec_of(provider).training_size_problems(cluster, catalog)


def fleet_size_problems(fleet: InferenceFleet) -> list[SizeProblem]:
    """Fields set for a provider that does not use them; blocks too small or not allowed."""
    provider = fleet.placement.provider
    net = fleet.placement.network
    regions = len(fleet.placement.all_regions)
    out = list(_unused(net, provider, FLEET_FIELDS, "fleets"))
    cidr = ipaddress.IPv4Network(net.cidr)
    if cidr.prefixlen > REGION_PREFIX or 2 ** (REGION_PREFIX - cidr.prefixlen) < regions:
        out.append(
            SizeProblem(
                (*NET, "cidr"),
                f"{net.cidr} does not hold one /{REGION_PREFIX} per region ({regions} regions)",
                f"use a block of at least {regions} x /{REGION_PREFIX}, e.g. 10.100.0.0/14",
            )
        )
    return out + spec_of(provider).fleet_size_problems(fleet)


def default_of(name: str) -> str:
    """The model default of a placement.network field."""
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
    if isinstance(model, TrainingCluster):
        used.update(spec_of(model.placement.provider).training_defaults(model, catalog))
    elif isinstance(model, InferenceFleet):
        provider = model.placement.provider
        nets = fleet_networks(model)
        used["service_cidr"] = nets.service_cidr
        used["pod_cidr"] = nets.pod_cidr
        used["control_plane_cidr"] = (
            model.placement.network.control_plane_cidr or spec_of(provider).control_plane_cidr
        )
    net = getattr(getattr(model, "placement", None), "network", None)
    return {k: v for k, v in used.items() if v is not None and getattr(net, k, None) is None}
