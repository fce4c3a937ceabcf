"""Target pulumi-gcp: a TrainingCluster on Compute Engine with multi-VPC GPU networking.

The network layout of each machine family (extra gVNIC GPU VPCs, RDMA subnets, MTU, boot
disk type) is catalog data (data/catalog.yaml `families`), e.g. a3-megagpu-8g (TCPXO):
system VPC + 8 GPU VPCs with MTU 8244; a3-ultragpu-8g / a4-highgpu-8g (RoCE): 2 gVNIC VPCs
(MTU 8896) + 1 RDMA VPC with the zone's RoCE network profile and 8 subnets, NIC type MRDMA.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from archform.providers.gcp.spec import gcp_training, gpu_network
from archform.render.targets.common.node_image import cluster_image, image_reference
from archform.render.targets.common.pulumi import (
    ConfigKey,
    ProviderConfig,
    Settings,
    base_settings,
    cluster_tags,
    host_address,
    lustre_entries,
    make_target,
    nfs_entries,
    round_up,
    zone_of,
)
from archform.render.targets.common.training_view import training_view
from archform.spec.catalog import load_catalog
from archform.spec.filestore import filestore, provisioned_gib
from archform.spec.models.training import Network, Storage, TrainingCluster
from archform.spec.networks import split

HEAD_MACHINE_TYPE = "n2-standard-8"
MODULES = ["__main__.py", "network.py", "compute.py", "storage.py"]
DEFAULT_BOOT_DISK = "pd-balanced"


@dataclass(frozen=True, slots=True)
class GpuNetworks:
    """Extra VPCs of a machine type: gVNIC GPU subnets, RDMA subnets, their MTU."""

    gvnic: list[str]
    rdma: list[str]
    mtu: int


@dataclass(frozen=True, slots=True)
class GcpGroup:
    """One node group's instances (settings.py GROUPS entry)."""

    name: str
    machine_type: str
    hostnames: list[str]
    addresses: list[str]
    purchase: str
    reservation: str | None
    networks: GpuNetworks
    boot_disk_type: str
    # False for a CPU group (e.g. a debug partition): system NIC only, live migration,
    # outside the compact placement policy.
    gpu: bool


@dataclass(frozen=True, slots=True)
class ManagedLustre:
    """One Managed Lustre instance (settings.py LUSTRE entry)."""

    name: str
    filesystem: str
    per_unit_storage_throughput: int
    capacity_gib: int
    source: str | None
    mount: str | None


@dataclass(frozen=True, slots=True)
class FilestoreShare:
    """One Filestore instance (settings.py NFS entry)."""

    name: str
    share: str
    tier: str
    # ENTERPRISE and REGIONAL instances live in a region, the others in a zone.
    regional: bool
    capacity_gib: int
    mount: str | None


def gpu_networks(machine_type: str, network: Network | None = None) -> GpuNetworks:
    """Extra VPCs a machine type needs (catalog facts) and their subnets.

    gVNIC GPU VPCs, RDMA subnets and MTU come from the catalog; the subnets are carved from
    placement.network.gpu_cidr and rdma_cidr (spec.networks).
    """
    net = network or Network()
    mtu, gvnic, rdma = gpu_network(load_catalog(), machine_type)
    return GpuNetworks(
        gvnic=split(net.gpu_cidr, gvnic) if gvnic else [],
        rdma=split(net.rdma_cidr, rdma) if rdma else [],
        mtu=mtu,
    )


def gcp_label(text: str) -> str:
    """A GCP label key or value: lowercase letters, digits, '_' and '-', at most 63 chars."""
    return re.sub(r"[^a-z0-9_-]", "_", text.lower())[:63]


def _fs_name(name: str) -> str:
    """Managed Lustre file system name: up to 8 letters/digits."""
    return re.sub(r"[^a-z0-9]", "", name)[:8] or "lustre"


def _lustre(cluster: TrainingCluster) -> list[ManagedLustre]:
    managed = load_catalog().lustre["gcp"]
    out = []
    for s in lustre_entries(cluster):
        tier = s.throughput_mbps_per_tib or managed.default_tier
        rule = managed.tier(tier)
        assert rule is not None, "checked by spec.buildable"
        out.append(
            ManagedLustre(
                name=s.name,
                filesystem=_fs_name(s.name),
                per_unit_storage_throughput=tier,
                capacity_gib=round_up(s.size_tib * 1024, rule.step_gib),
                source=s.source,
                mount=s.mount,
            )
        )
    return out


def _filestore(storage: Storage) -> FilestoreShare:
    tier = storage.filestore_tier or filestore().default
    return FilestoreShare(
        name=storage.name,
        share=re.sub(r"[^a-z0-9_]", "_", storage.name)[:16],
        tier=tier,
        regional=filestore().tiers[tier].location == "region",
        capacity_gib=provisioned_gib(tier, storage.size_tib),
        mount=storage.mount,
    )


def settings(cluster: TrainingCluster) -> tuple[Settings, list[ConfigKey], list[str]]:
    """settings.py values, config keys and README notes."""
    view = training_view(cluster)
    net = cluster.placement.network
    catalog = load_catalog()
    nets = gcp_training(cluster, catalog)
    system_cidr, psa_cidr = nets.system, nets.psa
    groups: list[GcpGroup] = []
    index = 32  # static addresses: controller .10, login .11-.26, compute from .32
    for group, gv in zip(cluster.compute.groups, view.groups, strict=True):
        assert group.instance_type is not None, "checked by spec.buildable"
        info = catalog.instance(group.instance_type)
        addresses = [host_address(system_cidr, index + i) for i in range(group.nodes)]
        index += group.nodes
        groups.append(
            GcpGroup(
                name=group.name,
                machine_type=group.instance_type,
                hostnames=gv.hostnames,
                addresses=addresses,
                purchase=group.purchase,
                reservation=group.capacity_reservation_id,
                networks=gpu_networks(group.instance_type, net),
                boot_disk_type=(info.boot_disk_type if info else None) or DEFAULT_BOOT_DISK,
                gpu=group.gpu is not None,
            )
        )
    gpu_groups = [g for g in groups if g.gpu] or groups
    layouts = {(g.networks.mtu, len(g.networks.gvnic), len(g.networks.rdma)) for g in gpu_groups}
    assert len(layouts) == 1, "checked by spec.buildable"
    nfs = [_filestore(s) for s in nfs_entries(cluster)]
    values = base_settings(cluster)
    values.update(
        {
            "ZONE": zone_of(cluster, f"{cluster.placement.primary_region}-a"),
            "LABELS": {gcp_label(k): gcp_label(v) for k, v in cluster_tags(cluster).items()},
            "SYSTEM_CIDR": system_cidr,
            "PSA_CIDR": psa_cidr,
            "COLLOCATED": cluster.placement.colocation == "cluster",
            "HEAD_MACHINE_TYPE": cluster.scheduler.controller_instance_type or HEAD_MACHINE_TYPE,
            "CONTROLLER_ADDRESS": host_address(system_cidr, 10),
            "LOGIN_ADDRESSES": [host_address(system_cidr, 11 + i) for i in range(len(view.login))],
            "GPU_NETWORKS": gpu_groups[0].networks,
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
        # OS Login names the POSIX user after the Google identity (not the local user name):
        # https://cloud.google.com/compute/docs/oslogin/set-up-oslogin
        ConfigKey(
            "sshUser",
            "OS Login user name Ansible logs in as: `gcloud compute os-login describe-profile "
            "--format='value(posixAccounts[0].username)'`",
        ),
    ]
    for g in groups:
        if g.purchase == "reserved":
            config.append(
                ConfigKey(
                    f"{g.name}Reservation",
                    "Compute Engine reservation of the node group in the key's name "
                    "(empty: any matching reservation)",
                    g.reservation or "",
                )
            )
    notes = [
        "Set the project with `pulumi config set gcp:project <id>` (and enable the Compute, "
        "Service Networking, Filestore and Managed Lustre APIs).",
        "Nodes have no external addresses; they reach the internet through Cloud NAT. Firewall "
        "rules allow traffic inside each cluster network and SSH only from access.ssh_cidrs.",
        "Disks and file systems are encrypted at rest (Google-managed keys, or `kmsKeySelfLink`).",
        "SSH uses OS Login (project-wide SSH keys are blocked): grant the Ansible user "
        "roles/compute.osAdminLogin, and roles/iam.serviceAccountUser on the nodes' service "
        "account (OS Login requires it for VMs that run as a service account), add its key with "
        "`gcloud compute os-login ssh-keys add --key-file=<key>.pub`, and set `sshUser` to its "
        "OS Login user name (https://cloud.google.com/compute/docs/oslogin/set-up-oslogin).",
        "Managed Lustre has no Pulumi resource for importing from Cloud Storage: after "
        "`pulumi up`, run `gcloud lustre instances import-data` for each storage entry that "
        "has a `source`.",
    ]
    return values, config, notes


def provider_config(settings: Settings) -> list[ProviderConfig]:
    """The project (the user's), region and zone the gcp provider deploys to."""
    return [
        ProviderConfig("gcp:project", None),
        ProviderConfig("gcp:region", str(settings["REGION"])),
        ProviderConfig("gcp:zone", str(settings["ZONE"])),
    ]


TARGET = make_target("gcp", settings, MODULES, provider_config)
