"""AWS blueprint facts and checks: VPC layout, EFA, FSx for Lustre, EKS ranges."""

from __future__ import annotations

import ipaddress
import re
from types import MappingProxyType
from typing import TYPE_CHECKING

from archform.spec.networks import NET, Block, RegionNetworks, SizeProblem, nth
from archform.spec.provider import ProviderSpec
from archform.spec.provider_base import SpecBase

if TYPE_CHECKING:
    from archform.spec.catalog import Catalog
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster

AWS_ZONES = 3  # the fleet program spreads each region's VPC over its first 3 zones
# serviceIpv4Cidr: /24 to /12 in RFC 1918 space
# (https://docs.aws.amazon.com/eks/latest/APIReference/API_KubernetesNetworkConfigRequest.html)
_PRIVATE = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")


class Aws(SpecBase):
    """Amazon Web Services: EC2 training clusters, EKS fleets, an S3 model registry."""

    name = "aws"
    label = "AWS"
    article = "an"
    cloud = True
    fleets = True
    registry_scheme = "s3"
    # EC2 quotes instance store in GB (10^9 bytes).
    nvme_unit_bytes = 10**9
    example_instance = "p5.48xlarge"
    example_small_gpu = "g6.xlarge"
    placement_mechanism = "a cluster placement group"
    # Capacity Blocks and targeted capacity reservations are placed already.
    reservation_places = True
    # Promotion speaks the S3 API (boto3).
    promote_store = "S3 or an S3-compatible store"
    registry_region_key = "aws:region"
    sdk_extra = "aws"
    vendor = "AWS"
    # The EKS cluster security group takes one HTTPS rule per api_access_cidrs entry.
    api_access_rules_in_security_group = True
    training_subnets = 4
    existing_network_needs_subnets = True
    lustre_scratch = True
    lustre_source = ("s3://", "FSx for Lustre links to S3 only")
    deployer_network = (
        re.compile(r"^tgw-[0-9a-f]{8,17}$"),
        "a transit gateway id, tgw-0123456789abcdef0",
    )
    deployer_network_regional = True
    service_cidr = "172.20.0.0/16"
    network_fields = frozenset({"service_cidr"})
    unused_network_fields = MappingProxyType(
        {
            "gpu_cidr": "EFA interfaces share the VPC",
            "pod_cidr": "EKS pods take addresses in the VPC subnets (VPC CNI)",
        }
    )
    # What blueprint fields mean on AWS (the schema's descriptions).
    field_docs = MappingProxyType(
        {
            "network.cidr": "the VPC (private and public subnets carved from it)",
            "network.service_cidr": f"default {service_cidr} (what EKS picks itself for a "
            "VPC in 10.0.0.0/8)",
            "deployer.network": "a transit gateway id (tgw-...), one per region as "
            "{region: id} when the fleet has several (transit gateways are regional)",
        }
    )
    # SkyPilot's `cloud: aws` (sky/clouds/).
    skypilot_cloud = "aws"
    # Product names users write for a generic kind (validate's did-you-mean).
    product_kinds = MappingProxyType(
        {"fsx": "lustre", "fsx_lustre": "lustre", "efs": "nfs", "s3": "object"}
    )

    def training_blocks(self, cluster: TrainingCluster, catalog: Catalog) -> list[Block]:
        """The cluster VPC, unless the blueprint reuses one."""
        net = cluster.placement.network
        return [] if net.existing_vpc_id else [Block("the cluster VPC", net.cidr, (*NET, "cidr"))]

    def fleet_region(self, block: str, index: int, control: str | None) -> RegionNetworks:
        """A public and a private subnet in each of the first zones."""
        return RegionNetworks(
            block=block,
            nodes=nth(block, 19, 2),
            public=[nth(block, 20, z) for z in range(AWS_ZONES)],
            private=[nth(block, 19, 2 + z) for z in range(AWS_ZONES)],
        )

    def fleet_size_problems(self, fleet: InferenceFleet) -> list[SizeProblem]:
        """A Service range EKS does not take."""
        net = fleet.placement.network
        if not net.service_cidr:
            return []
        service = ipaddress.IPv4Network(net.service_cidr)
        private = [ipaddress.IPv4Network(p) for p in _PRIVATE]
        if 12 <= service.prefixlen <= 24 and any(service.subnet_of(p) for p in private):
            return []
        return [
            SizeProblem(
                (*NET, "service_cidr"),
                f"EKS takes a Service range of /24 to /12 inside 10.0.0.0/8, "
                f"172.16.0.0/12 or 192.168.0.0/16, not {net.service_cidr}",
                "use e.g. 172.20.0.0/16 (the EKS API reference, serviceIpv4Cidr)",
            )
        ]


SPEC: ProviderSpec = Aws()
