"""Managed Lustre (one instance per lustre storage entry) and Filestore for nfs entries.

Both attach to the system VPC; Managed Lustre needs private services access on it.
Encryption at rest is always on: Google-managed keys, or the `kmsKeySelfLink` config key for
Managed Lustre (Filestore instances use Google-managed keys). Each Filestore instance has the
blueprint's `filestore_tier` (default BASIC_SSD); ENTERPRISE and REGIONAL ones are regional.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

import settings as s
from network import Network

config = pulumi.Config()


@dataclass
class FileSystems:
    """Mount targets for the inventory."""

    lustre: dict[str, tuple[object, object]] = field(default_factory=dict)
    nfs: dict[str, tuple[object, object]] = field(default_factory=dict)


def _private_services_access(net: Network) -> gcp.servicenetworking.Connection:
    base, prefix = s.PSA_CIDR.split("/")
    block = gcp.compute.GlobalAddress(
        f"{s.CLUSTER}-psa",
        purpose="VPC_PEERING",
        address_type="INTERNAL",
        address=base,
        prefix_length=int(prefix),
        network=net.system.id,
    )
    # Lustre servers open LNet connections (TCP 988) back to the clients.
    gcp.compute.Firewall(
        f"{s.CLUSTER}-lustre-lnet",
        network=net.system.self_link,
        direction="INGRESS",
        source_ranges=[s.PSA_CIDR],
        allows=[{"protocol": "tcp", "ports": ["988"]}],
        description="Managed Lustre servers to clients (LNet)",
    )
    return gcp.servicenetworking.Connection(
        f"{s.CLUSTER}-psa",
        network=net.system.id,
        service="servicenetworking.googleapis.com",
        reserved_peering_ranges=[block.name],
    )


def build(net: Network) -> FileSystems:
    """Create the file systems."""
    out = FileSystems()
    kms = config.get("kmsKeySelfLink") or s.CONFIG_DEFAULTS.get("kmsKeySelfLink") or None
    if s.LUSTRE:
        peering = _private_services_access(net)
        for entry in s.LUSTRE:
            fs = gcp.lustre.Instance(
                f"{s.CLUSTER}-{entry['name']}",
                instance_id=f"{s.CLUSTER}-{entry['name']}"[:63],
                location=s.ZONE,
                filesystem=entry["filesystem"],
                capacity_gib=str(entry["capacity_gib"]),
                per_unit_storage_throughput=str(entry["per_unit_storage_throughput"]),
                network=net.system.id,
                kms_key=kms,
                labels=s.LABELS,
                opts=pulumi.ResourceOptions(depends_on=[peering]),
            )
            # mount_point is "IP@tcp:/filesystem".
            out.lustre[entry["name"]] = (
                fs.mount_point.apply(lambda mp: mp.split("@", 1)[0] if mp else mp),
                entry["filesystem"],
            )
    for entry in s.NFS:
        fs = gcp.filestore.Instance(
            f"{s.CLUSTER}-{entry['name']}",
            location=s.REGION if entry["regional"] else s.ZONE,
            tier=entry["tier"],
            file_shares={"name": entry["share"], "capacity_gb": entry["capacity_gib"]},
            networks=[{"network": net.system.name, "modes": ["MODE_IPV4"]}],
            labels=s.LABELS,
        )
        address = fs.networks.apply(
            lambda nets: nets[0].ip_addresses[0] if nets and nets[0].ip_addresses else None
        )
        out.nfs[entry["name"]] = (address, f"/{entry['share']}")
    return out
