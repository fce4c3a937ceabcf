"""Target pulumi-gcp: a TrainingCluster on Compute Engine with multi-VPC GPU networking.

Network layouts per machine family (training-clusters.md s5; cloud.google.com/compute/docs/
gpus/gpu-network-bandwidth; cluster-toolkit a3-megagpu-8g / a3-ultragpu-8g blueprints):
- a3-megagpu-8g (TCPXO): system VPC + 8 GPU VPCs, gVNIC, MTU 8244 on all nine.
- a3-highgpu-8g (TCPX): system VPC + 4 GPU VPCs, gVNIC, MTU 8244.
- a3-ultragpu-8g, a4-highgpu-8g (RoCE): 2 gVNIC VPCs (MTU 8896) + 1 RDMA VPC with the
  zone's RoCE network profile and 8 subnets, NIC type MRDMA.
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

# Managed Lustre tier (MB/s/TiB) -> minimum capacity = capacity step, GiB
# (docs.cloud.google.com/managed-lustre/docs/increase-capacity, table "Step Size").
LUSTRE_STEP_GIB = {1000: 9000, 500: 18000, 250: 36000, 125: 72000}
FILESTORE_BASIC_SSD_MIN_GIB = 2560  # Filestore Basic SSD: 2.5 TiB minimum
HEAD_MACHINE_TYPE = "n2-standard-8"
MODULES = ["__main__.py", "network.py", "compute.py", "storage.py"]

# family -> (extra gVNIC VPCs beyond the system VPC, MRDMA subnets, MTU)
_LAYOUTS: dict[str, tuple[int, int, int]] = {
    "a3-megagpu-8g": (8, 0, 8244),
    "a3-highgpu-8g": (4, 0, 8244),
    "a3-ultragpu-8g": (1, 8, 8896),
    "a4-highgpu-8g": (1, 8, 8896),
}


def gpu_networks(machine_type: str) -> dict[str, Any]:
    """Extra VPCs a machine type needs: gVNIC GPU VPCs, RDMA subnets, MTU."""
    gvnic, rdma, mtu = _LAYOUTS.get(machine_type, (0, 0, 1460))
    return {
        "gvnic": [f"172.16.{i * 16}.0/20" for i in range(gvnic)],
        "rdma": [f"172.17.{i * 16}.0/20" for i in range(rdma)],
        "mtu": mtu,
    }


def gcp_label(text: str) -> str:
    """A GCP label key or value: lowercase letters, digits, '_' and '-', at most 63 chars."""
    return re.sub(r"[^a-z0-9_-]", "_", text.lower())[:63]


def _fs_name(name: str) -> str:
    """Managed Lustre file system name: up to 8 letters/digits."""
    return re.sub(r"[^a-z0-9]", "", name)[:8] or "lustre"


def _lustre(cluster: TrainingCluster) -> list[dict[str, Any]]:
    out = []
    for s in lustre_entries(cluster):
        tier = s.throughput_mbps_per_tib or 250
        if tier not in LUSTRE_STEP_GIB:
            raise UsageError(
                f"{cluster.name}: storage {s.name!r}: Managed Lustre has no {tier} MB/s/TiB tier",
                "set throughput_mbps_per_tib to 125, 250, 500 or 1000",
            )
        out.append(
            {
                "name": s.name,
                "filesystem": _fs_name(s.name),
                "per_unit_storage_throughput": tier,
                "capacity_gib": round_up(s.capacity_tib * 1024, LUSTRE_STEP_GIB[tier]),
                "source": s.source,
                "mount": s.mount,
            }
        )
    return out


def settings(cluster: TrainingCluster) -> tuple[dict[str, Any], list[ConfigKey], list[str]]:
    """settings.py values, config keys and README notes."""
    view = training_view(cluster)
    net = cluster.placement.network
    if net.existing_vpc_id:
        raise UsageError(
            f"{cluster.name}: existing_vpc_id is not supported for GCP clusters",
            "GPU clusters need their own system and GPU VPCs; remove placement.network.existing_*",
        )
    system_cidr, psa_cidr = carve(net.cidr, 2)
    groups = []
    index = 32  # static addresses: controller .10, login .11-.26, compute from .32
    for group, gv in zip(cluster.compute.groups, view["groups"], strict=True):
        if group.instance_type is None:
            raise UsageError(
                f"{cluster.name}: node group {group.name!r} has no instance_type",
                "cloud clusters need compute.instance_type, e.g. a3-megagpu-8g",
            )
        addresses = [host_address(system_cidr, index + i) for i in range(group.nodes)]
        index += group.nodes
        groups.append(
            {
                "name": group.name,
                "machine_type": group.instance_type,
                "hostnames": gv["hostnames"],
                "addresses": addresses,
                "purchase": group.purchase,
                "reservation": group.capacity_reservation_id,
                "networks": gpu_networks(group.instance_type),
                "boot_disk_type": "hyperdisk-balanced"
                if group.instance_type in ("a3-ultragpu-8g", "a4-highgpu-8g")
                else "pd-balanced",
            }
        )
    layouts = {
        (g["networks"]["mtu"], len(g["networks"]["gvnic"]), len(g["networks"]["rdma"]))
        for g in groups
    }
    if len(layouts) > 1:
        raise UsageError(
            f"{cluster.name}: node groups need different GPU network layouts",
            "put machine families with different NIC layouts in separate clusters",
        )
    nfs = []
    for s in nfs_entries(cluster):
        nfs.append(
            {
                "name": s.name,
                "share": re.sub(r"[^a-z0-9_]", "_", s.name)[:16],
                "capacity_gib": max(
                    FILESTORE_BASIC_SSD_MIN_GIB, round_up(s.capacity_tib * 1024, 1)
                ),
                "mount": s.mount,
            }
        )
    values = base_settings(cluster)
    values.update(
        {
            "ZONE": zone_of(cluster, f"{cluster.placement.primary_region}-a"),
            "LABELS": {gcp_label(k): gcp_label(v) for k, v in values["TAGS"].items()},
            "SYSTEM_CIDR": system_cidr,
            "PSA_CIDR": psa_cidr,
            "COLLOCATED": cluster.placement.colocation == "cluster",
            "HEAD_MACHINE_TYPE": cluster.scheduler.controller_instance_type or HEAD_MACHINE_TYPE,
            "CONTROLLER_ADDRESS": host_address(system_cidr, 10),
            "LOGIN_ADDRESSES": [
                host_address(system_cidr, 11 + i) for i in range(len(view["login"]))
            ],
            "GPU_NETWORKS": groups[0]["networks"],
            "GROUPS": groups,
            "LUSTRE": _lustre(cluster),
            "NFS": nfs,
        }
    )
    config = [
        ConfigKey(
            "image",
            f"Boot image for every node (archform image {cluster_image(cluster).id})",
            image_reference(cluster),
        ),
        ConfigKey(
            "kmsKeySelfLink",
            "Cloud KMS key for boot disks and Lustre (empty: Google-managed encryption)",
            "",
        ),
    ]
    for g in groups:
        if g["purchase"] == "reserved":
            config.append(
                ConfigKey(
                    f"{g['name']}Reservation",
                    "Compute Engine reservation of the node group in the key's name "
                    "(empty: any matching reservation)",
                    g["reservation"] or "",
                )
            )
    notes = [
        "Set the project with `pulumi config set gcp:project <id>` (and enable the Compute, "
        "Service Networking, Filestore and Managed Lustre APIs).",
        "Nodes have no external addresses; they reach the internet through Cloud NAT. Firewall "
        "rules allow traffic inside each cluster network and SSH only from access.ssh_cidrs.",
        "Disks and file systems are encrypted at rest (Google-managed keys, or `kmsKeySelfLink`).",
        "SSH uses OS Login (project-wide SSH keys are blocked): grant the Ansible user "
        "roles/compute.osAdminLogin.",
        "Managed Lustre has no Pulumi resource for importing from Cloud Storage: after "
        "`pulumi up`, run `gcloud lustre instances import-data` for each storage entry that "
        "has a `source`.",
    ]
    return values, config, notes


TARGET = make_target("gcp", settings, MODULES)
