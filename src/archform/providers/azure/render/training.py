"""Target pulumi-azure: a TrainingCluster on Azure with one scale set per InfiniBand domain.

InfiniBand is wired automatically only between VMs of the same scale set, and a scale set
with `singlePlacementGroup=true` holds at most 100 VMs (Azure docs
virtual-machine-scale-sets-placement-groups). spec.buildable refuses a larger node group when
the blueprint loads; Managed Lustre tiers and capacity steps come from the catalog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from archform.providers.azure.spec import scale_set_max_vms
from archform.render.targets.common.node_image import cluster_image, image_reference
from archform.render.targets.common.pulumi import (
    ConfigKey,
    ProviderConfig,
    Settings,
    base_settings,
    carve,
    host_address,
    lustre_entries,
    make_target,
    nfs_entries,
    round_up,
    zone_of,
)
from archform.render.targets.common.training_view import training_view
from archform.spec.catalog import load_catalog
from archform.spec.models.training import TrainingCluster

AZURE_FILES_MIN_GIB = 100  # premium file shares
HEAD_VM_SIZE = "Standard_D8s_v5"
MODULES = ["__main__.py", "network.py", "compute.py", "storage.py"]


@dataclass(frozen=True, slots=True)
class ScaleSet:
    """One node group as a Uniform scale set (settings.py GROUPS entry)."""

    name: str
    vm_size: str
    nodes: int
    hostnames: list[str]
    computer_name_prefix: str
    spot: bool
    reserved: bool  # Reserved VM Instances (billing); no capacity reservation group


@dataclass(frozen=True, slots=True)
class Amlfs:
    """One Azure Managed Lustre file system (settings.py LUSTRE entry)."""

    name: str
    sku: str
    capacity_tib: int
    source: str | None
    mount: str | None


@dataclass(frozen=True, slots=True)
class FileShare:
    """One Azure Files NFS share and its storage account (settings.py NFS entry)."""

    name: str
    account: str
    share: str
    quota_gib: int
    mount: str | None


def _account_name(cluster: str, storage: str) -> str:
    """A storage account name: 3-24 lowercase letters and digits (globally unique)."""
    return re.sub(r"[^a-z0-9]", "", f"{cluster}{storage}")[:24].ljust(3, "0")


def settings(cluster: TrainingCluster) -> tuple[Settings, list[ConfigKey], list[str]]:
    """settings.py values, config keys and README notes."""
    view = training_view(cluster)
    net = cluster.placement.network
    catalog = load_catalog()
    compute_cidr, lustre_cidr = carve(net.cidr, 4)[:2]
    groups: list[ScaleSet] = []
    for group, gv in zip(cluster.compute.groups, view.groups, strict=True):
        assert group.nodes <= scale_set_max_vms(catalog), "spec.buildable"
        assert group.instance_type is not None, "checked by spec.buildable"
        prefix = f"{cluster.name}-{group.name}-"
        groups.append(
            ScaleSet(
                name=group.name,
                vm_size=group.instance_type,
                nodes=group.nodes,
                hostnames=gv.hostnames,
                computer_name_prefix=prefix,
                spot=group.purchase == "spot",
                reserved=group.purchase == "reserved",
            )
        )
    lustre: list[Amlfs] = []
    amlfs = catalog.lustre["azure"]
    for s in lustre_entries(cluster):
        tier = s.throughput_mbps_per_tib or amlfs.default_tier
        rule = amlfs.tier(tier)
        assert rule is not None, "checked by spec.buildable"
        lustre.append(
            Amlfs(
                name=s.name,
                sku=f"AMLFS-Durable-Premium-{tier}",
                capacity_tib=round_up(s.size_tib * 1024, rule.step_gib) // 1024,
                source=s.source,
                mount=s.mount,
            )
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
            "LOGIN_ADDRESSES": [host_address(compute_cidr, 11 + i) for i in range(len(view.login))],
            "GROUPS": groups,
            "LUSTRE": lustre,
            "NFS": [
                FileShare(
                    name=s.name,
                    account=_account_name(cluster.name, s.name),
                    share=re.sub(r"[^a-z0-9-]", "-", s.name)[:63],
                    quota_gib=max(AZURE_FILES_MIN_GIB, round_up(s.size_tib * 1024, 1)),
                    mount=s.mount,
                )
                for s in nfs_entries(cluster)
            ],
        }
    )
    config = [
        ConfigKey("sshPublicKey", "SSH public key for the admin user (OpenSSH format)"),
        ConfigKey(
            "adminUsername", "Admin user on every VM (the user Ansible logs in as)", "azureuser"
        ),
        ConfigKey(
            "image",
            f"VM image as publisher:offer:sku:version (archform image {cluster_image(cluster).id})",
            image_reference(cluster),
        ),
    ]
    for entry in lustre:
        if entry.source:
            config.append(
                ConfigKey(
                    f"{entry.name}HsmContainerId",
                    "Resource id of the blob container behind the Lustre file system in the key's "
                    "name "
                    "(empty: no blob integration)",
                    "",
                )
            )
            config.append(
                ConfigKey(
                    f"{entry.name}HsmLoggingContainerId",
                    "Resource id of the blob container for that file system's import logs",
                    "",
                )
            )
    notes = [
        "Each node group is one Uniform scale set with singlePlacementGroup=true, "
        "platformFaultDomainCount=1 and overprovisioning off: Azure wires InfiniBand only "
        f"inside such a set, which holds at most {scale_set_max_vms(catalog)} VMs.",
        "The scale set may replace a VM (new instance id, computer name and address), so the "
        "Ansible inventory lists its live VMs when it runs (`az vmss list-instances` and "
        "`az vmss nic list`: install the Azure CLI and `az login` where Ansible runs); each VM "
        "keeps the Slurm node name it got first (ansible/scale-set-hosts.json), a new one takes "
        "the lowest free name, and Ansible sets the host name.",
        "Encryption at host is on for every VM (register the EncryptionAtHost feature on the "
        "subscription first); Managed Lustre and Azure Files encrypt at rest.",
        "The NSG admits SSH only from access.ssh_cidrs; nodes have no public addresses and go "
        "out through a NAT gateway.",
    ]
    if any(g.reserved for g in groups):
        notes.append(
            "purchase: reserved means Azure Reserved VM Instances for the VM size and region "
            "(buy them before `pulumi up`; the discount applies without any id). A capacity "
            "reservation group is not attached: Uniform scale sets join one only with "
            "singlePlacementGroup=false, which InfiniBand cannot use "
            "(https://learn.microsoft.com/en-us/azure/virtual-machines/"
            "capacity-reservation-associate-virtual-machine-scale-set)."
        )
    return values, config, notes


def provider_config(settings: Settings) -> list[ProviderConfig]:
    """The location the azure-native provider deploys to."""
    return [ProviderConfig("azure-native:location", str(settings["REGION"]))]


TARGET = make_target("azure", settings, MODULES, provider_config)
