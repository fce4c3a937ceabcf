"""The system VPC (nic0, Slurm, storage, SSH) and the GPU VPCs the machine family needs.

Firewall rules: each network admits traffic only from its own subnets; SSH is admitted on
the system network from access.ssh_cidrs only (no rule when that list is empty). Nodes have
no external IP; Cloud NAT gives them outbound access.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi_gcp as gcp

import settings as s


@dataclass
class Network:
    """Networks and subnets, in NIC order after nic0."""

    system: gcp.compute.Network
    system_subnet: gcp.compute.Subnetwork
    gvnic: list[tuple[gcp.compute.Network, gcp.compute.Subnetwork]] = field(default_factory=list)
    rdma: list[tuple[gcp.compute.Network, gcp.compute.Subnetwork]] = field(default_factory=list)


def _allow_internal(name: str, network: gcp.compute.Network, ranges: list[str]) -> None:
    gcp.compute.Firewall(
        name,
        network=network.self_link,
        direction="INGRESS",
        source_ranges=ranges,
        allows=[{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
        description="Traffic between cluster members only",
    )


def build() -> Network:
    """Create every network, subnet, firewall rule and the Cloud NAT."""
    mtu = s.GPU_NETWORKS["mtu"]
    system = gcp.compute.Network(
        f"{s.CLUSTER}-net",
        auto_create_subnetworks=False,
        mtu=mtu,
        routing_mode="REGIONAL",
    )
    system_subnet = gcp.compute.Subnetwork(
        f"{s.CLUSTER}-sub",
        network=system.id,
        region=s.REGION,
        ip_cidr_range=s.SYSTEM_CIDR,
        private_ip_google_access=True,
    )
    net = Network(system, system_subnet)
    _allow_internal(f"{s.CLUSTER}-internal", system, [s.SYSTEM_CIDR])
    # A VPC firewall rule holds IPv4 or IPv6 ranges, never both
    # (https://cloud.google.com/firewall/docs/using-firewalls): one rule per family.
    ssh_v4 = [c for c in s.SSH_CIDRS if ":" not in c]
    ssh_v6 = [c for c in s.SSH_CIDRS if ":" in c]
    for suffix, ranges in (("", ssh_v4), ("-v6", ssh_v6)):
        if ranges:
            gcp.compute.Firewall(
                f"{s.CLUSTER}-ssh{suffix}",
                network=system.self_link,
                direction="INGRESS",
                source_ranges=ranges,
                allows=[{"protocol": "tcp", "ports": ["22"]}],
                description="SSH from access.ssh_cidrs only",
            )
    router = gcp.compute.Router(f"{s.CLUSTER}-router", network=system.id, region=s.REGION)
    gcp.compute.RouterNat(
        f"{s.CLUSTER}-nat",
        router=router.name,
        region=s.REGION,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
        log_config={"enable": True, "filter": "ERRORS_ONLY"},
    )

    for i, cidr in enumerate(s.GPU_NETWORKS["gvnic"]):
        vpc = gcp.compute.Network(
            f"{s.CLUSTER}-gpu{i}",
            auto_create_subnetworks=False,
            mtu=mtu,
            routing_mode="REGIONAL",
        )
        subnet = gcp.compute.Subnetwork(
            f"{s.CLUSTER}-gpu{i}-sub", network=vpc.id, region=s.REGION, ip_cidr_range=cidr
        )
        _allow_internal(f"{s.CLUSTER}-gpu{i}-internal", vpc, [cidr])
        net.gvnic.append((vpc, subnet))

    if s.GPU_NETWORKS["rdma"]:
        project = gcp.organizations.get_client_config().project
        # RDMA (RoCE) VPCs are zonal and carry the zone's RoCE network profile
        # (cloud.google.com/vpc/docs/rdma-network-profiles).
        rdma = gcp.compute.Network(
            f"{s.CLUSTER}-rdma",
            auto_create_subnetworks=False,
            mtu=mtu,
            network_profile=(
                f"https://www.googleapis.com/compute/v1/projects/{project}"
                f"/global/networkProfiles/{s.ZONE}-vpc-roce"
            ),
        )
        for i, cidr in enumerate(s.GPU_NETWORKS["rdma"]):
            subnet = gcp.compute.Subnetwork(
                f"{s.CLUSTER}-rdma{i}-sub", network=rdma.id, region=s.REGION, ip_cidr_range=cidr
            )
            net.rdma.append((rdma, subnet))
    return net
