"""Azure Managed Lustre (one per lustre storage entry) and Azure Files NFS for nfs entries.

Managed Lustre encrypts at rest with Microsoft-managed keys; the NFS storage account requires
infrastructure (double) encryption and admits only the node subnet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_azure_native as azure

import settings as s
from network import Network

config = pulumi.Config()


@dataclass
class FileSystems:
    """Mount targets for the inventory."""

    lustre: dict[str, tuple[object, object]] = field(default_factory=dict)
    nfs: dict[str, tuple[object, object]] = field(default_factory=dict)


def _hsm(entry: dict[str, Any]) -> dict[str, object] | None:
    container = config.get(f"{entry['name']}HsmContainerId") or ""
    logging = config.get(f"{entry['name']}HsmLoggingContainerId") or ""
    if not (entry["source"] and container and logging):
        return None
    return {"settings": {"container": container, "logging_container": logging}}


def build(net: Network) -> FileSystems:
    """Create the file systems."""
    out = FileSystems()
    for entry in s.LUSTRE:
        fs = azure.storagecache.AmlFilesystem(
            f"{s.CLUSTER}-{entry['name']}",
            aml_filesystem_name=f"{s.CLUSTER}-{entry['name']}"[:80],
            resource_group_name=net.group.name,
            location=s.REGION,
            zones=[s.ZONE],
            sku={"name": entry["sku"]},
            storage_capacity_ti_b=float(entry["capacity_tib"]),
            filesystem_subnet=net.lustre_subnet.id,
            maintenance_window={"day_of_week": "Sunday", "time_of_day_utc": "02:00"},
            hsm=_hsm(entry),
            tags=s.TAGS,
        )
        # The MGS address; Managed Lustre's file system name is always "lustrefs".
        mgs = fs.client_info.apply(lambda info: info.mgs_address if info else None)
        out.lustre[entry["name"]] = (mgs, "lustrefs")
    for entry in s.NFS:
        account = azure.storage.StorageAccount(
            f"{s.CLUSTER}-{entry['name']}",
            account_name=entry["account"],
            resource_group_name=net.group.name,
            location=s.REGION,
            kind="FileStorage",
            sku={"name": "Premium_LRS"},
            # NFS 4.1 shares do not use TLS; the network rules keep traffic on the node subnet.
            enable_https_traffic_only=False,
            minimum_tls_version="TLS1_2",
            allow_blob_public_access=False,
            allow_shared_key_access=False,
            network_rule_set={
                "default_action": "Deny",
                "bypass": "None",
                "virtual_network_rules": [{"virtual_network_resource_id": net.compute_subnet.id}],
            },
            encryption={
                "key_source": "Microsoft.Storage",
                "require_infrastructure_encryption": True,
                "services": {"file": {"enabled": True, "key_type": "Account"}},
            },
            tags=s.TAGS,
        )
        azure.storage.FileShare(
            f"{s.CLUSTER}-{entry['name']}",
            account_name=account.name,
            resource_group_name=net.group.name,
            share_name=entry["share"],
            enabled_protocols="NFS",
            root_squash="NoRootSquash",
            share_quota=entry["quota_gib"],
            opts=pulumi.ResourceOptions(depends_on=[account]),
        )
        out.nfs[entry["name"]] = (
            f"{entry['account']}.file.core.windows.net",
            f"/{entry['account']}/{entry['share']}",
        )
    return out
