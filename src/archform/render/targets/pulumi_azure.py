"""Target pulumi-azure: a TrainingCluster on Azure with one scale set per InfiniBand domain.

InfiniBand is wired automatically only between VMs of the same scale set, and a scale set
with `singlePlacementGroup=true` holds at most 100 VMs (training-clusters.md s5; Azure docs
virtual-machine-scale-sets-placement-groups). A larger node group is refused at generate time.
"""

from __future__ import annotations

import re
from typing import Any

from archform.render.targets.node_image import cluster_image, image_reference
from archform.render.targets.pulumi_common import (
    ConfigKey,
    base_settings,
    carve,
    host_address,
    lustre_entries,
    make_target,
    nfs_entries,
    round_up,
    zone_of,
)
from archform.render.view import training_view
from archform.spec import UsageError
from archform.spec.models.training import TrainingCluster

SINGLE_PLACEMENT_GROUP_MAX = 100
# Azure Managed Lustre SKU tier (MB/s/TiB) -> capacity step in TiB (learn.microsoft.com
# azure-managed-lustre amlfs-overview, "storage capacity increments"; unverified here).
AMLFS_STEP_TIB = {500: 4, 250: 8, 125: 16, 40: 48}
AZURE_FILES_MIN_GIB = 100  # premium file shares
HEAD_VM_SIZE = "Standard_D8s_v5"
MODULES = ["__main__.py", "network.py", "compute.py", "storage.py"]


def _base36(number: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def scale_set_hostnames(prefix: str, count: int) -> list[str]:
    """Computer names of a new Uniform scale set's VMs: prefix + 6-digit base-36 instance id.

    With overprovisioning off, a new scale set numbers its instances 0..count-1.
    """
    return [f"{prefix}{_base36(i).rjust(6, '0')}".lower() for i in range(count)]


def _account_name(cluster: str, storage: str) -> str:
    """A storage account name: 3-24 lowercase letters and digits (globally unique)."""
    return re.sub(r"[^a-z0-9]", "", f"{cluster}{storage}")[:24].ljust(3, "0")


def settings(cluster: TrainingCluster) -> tuple[dict[str, Any], list[ConfigKey], list[str]]:
    """settings.py values, config keys and README notes."""
    view = training_view(cluster)
    net = cluster.placement.network
    if net.existing_vpc_id:
        raise UsageError(
            f"{cluster.name}: existing_vpc_id is not supported for Azure clusters yet",
            "remove placement.network.existing_* to let archform create the VNet",
        )
    compute_cidr, lustre_cidr = carve(net.cidr, 4)[:2]
    groups = []
    for group, gv in zip(cluster.compute.groups, view["groups"], strict=True):
        if group.nodes > SINGLE_PLACEMENT_GROUP_MAX:
            raise UsageError(
                f"{cluster.name}: node group {group.name!r} has {group.nodes} nodes; one Azure "
                f"scale set with a single placement group (one InfiniBand domain) holds at most "
                f"{SINGLE_PLACEMENT_GROUP_MAX}",
                f"split it into extra_groups of at most {SINGLE_PLACEMENT_GROUP_MAX} nodes",
            )
        if group.instance_type is None:
            raise UsageError(
                f"{cluster.name}: node group {group.name!r} has no instance_type",
                "cloud clusters need compute.instance_type, e.g. Standard_ND96isr_H100_v5",
            )
        prefix = f"{cluster.name}-{group.name}-"
        groups.append(
            {
                "name": group.name,
                "vm_size": group.instance_type,
                "nodes": group.nodes,
                "hostnames": gv["hostnames"],
                "computer_name_prefix": prefix,
                "computer_names": scale_set_hostnames(prefix, group.nodes),
                "spot": group.purchase == "spot",
                "capacity_reservation_group_id": group.capacity_reservation_id,
            }
        )
    lustre = []
    for s in lustre_entries(cluster):
        tier = s.throughput_mbps_per_tib or 250
        if tier not in AMLFS_STEP_TIB:
            raise UsageError(
                f"{cluster.name}: storage {s.name!r}: Azure Managed Lustre has no {tier} "
                "MB/s/TiB tier",
                "set throughput_mbps_per_tib to 40, 125, 250 or 500",
            )
        lustre.append(
            {
                "name": s.name,
                "sku": f"AMLFS-Durable-Premium-{tier}",
                "capacity_tib": round_up(s.capacity_tib, AMLFS_STEP_TIB[tier]),
                "source": s.source,
                "mount": s.mount,
            }
        )
    values = base_settings(cluster)
    values.update(
        {
            "ZONE": zone_of(cluster, "1"),
            "VNET_CIDR": net.cidr,
            "COMPUTE_CIDR": compute_cidr,
            "LUSTRE_CIDR": lustre_cidr,
            "HEAD_VM_SIZE": cluster.scheduler.controller_instance_type or HEAD_VM_SIZE,
            "CONTROLLER_ADDRESS": host_address(compute_cidr, 10),
            "LOGIN_ADDRESSES": [
                host_address(compute_cidr, 11 + i) for i in range(len(view["login"]))
            ],
            "GROUPS": groups,
            "LUSTRE": lustre,
            "NFS": [
                {
                    "name": s.name,
                    "account": _account_name(cluster.name, s.name),
                    "share": re.sub(r"[^a-z0-9-]", "-", s.name)[:63],
                    "quota_gib": max(AZURE_FILES_MIN_GIB, round_up(s.capacity_tib * 1024, 1)),
                    "mount": s.mount,
                }
                for s in nfs_entries(cluster)
            ],
        }
    )
    config = [
        ConfigKey("sshPublicKey", "SSH public key for the admin user (OpenSSH format)"),
        ConfigKey("adminUsername", "Admin user on every VM", "azureuser"),
        ConfigKey(
            "image",
            f"VM image as publisher:offer:sku:version (archform image {cluster_image(cluster).id})",
            image_reference(cluster),
        ),
    ]
    for entry in lustre:
        if entry["source"]:
            config.append(
                ConfigKey(
                    f"{entry['name']}HsmContainerId",
                    "Resource id of the blob container behind the Lustre file system in the key's "
                    "name "
                    "(empty: no blob integration)",
                    "",
                )
            )
            config.append(
                ConfigKey(
                    f"{entry['name']}HsmLoggingContainerId",
                    "Resource id of the blob container for that file system's import logs",
                    "",
                )
            )
    for g in groups:
        config.append(
            ConfigKey(
                f"{g['name']}CapacityReservationGroupId",
                "Capacity reservation group id of the node group in the key's name (empty: none)",
                g["capacity_reservation_group_id"] or "",
            )
        )
    notes = [
        "Each node group is one Uniform scale set with singlePlacementGroup=true, "
        "platformFaultDomainCount=1 and overprovisioning off: Azure wires InfiniBand only "
        "inside such a set, which holds at most 100 VMs.",
        "Scale-set VMs keep Azure's computer names (prefix + base-36 instance id); the inventory "
        "maps each Slurm node name to one of them, and Ansible sets the host name.",
        "Encryption at host is on for every VM (register the EncryptionAtHost feature on the "
        "subscription first); Managed Lustre and Azure Files encrypt at rest.",
        "The NSG admits SSH only from access.ssh_cidrs; nodes have no public addresses and go "
        "out through a NAT gateway.",
    ]
    return values, config, notes


TARGET = make_target("azure", settings, MODULES)
