"""FSx for Lustre (one per lustre storage entry, S3-linked when `source` is set) and EFS for nfs.

Both are encrypted at rest (FSx always; EFS `encrypted=True`) and reachable only from the
cluster security group. Persistent file systems with no S3 link keep daily automatic backups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi_aws as aws

import settings as s
from network import Network


@dataclass
class FileSystems:
    """Mount targets for the inventory."""

    lustre: dict[str, tuple[object, object]] = field(default_factory=dict)
    nfs: dict[str, tuple[object, object]] = field(default_factory=dict)


def _lustre(entry: dict[str, Any], net: Network) -> aws.fsx.LustreFileSystem:
    name = f"{s.CLUSTER}-{entry['name']}"
    backups: dict[str, object] = {}
    if entry["backup_retention_days"]:
        backups = {
            "automatic_backup_retention_days": entry["backup_retention_days"],
            "copy_tags_to_backups": True,
        }
    fs = aws.fsx.LustreFileSystem(
        name,
        deployment_type=entry["deployment_type"],
        per_unit_storage_throughput=entry["per_unit_storage_throughput"],
        storage_capacity=entry["storage_capacity_gib"],
        storage_type="SSD",
        file_system_type_version="2.15",
        data_compression_type="LZ4",
        subnet_ids=net.subnet_id,
        security_group_ids=[net.cluster_sg.id],
        tags={**s.TAGS, "Name": name},
        **backups,
    )
    if entry["source"]:
        s3: dict[str, object] = {
            "auto_import_policy": {"events": ["NEW", "CHANGED", "DELETED"]},
        }
        if entry["export_to_source"]:
            s3["auto_export_policy"] = {"events": ["NEW", "CHANGED", "DELETED"]}
        aws.fsx.DataRepositoryAssociation(
            f"{name}-s3",
            file_system_id=fs.id,
            data_repository_path=entry["source"],
            # The whole file system maps to the bucket prefix (one association per file system).
            file_system_path="/",
            batch_import_meta_data_on_create=True,
            s3=s3,
            tags=s.TAGS,
        )
    return fs


def _efs(entry: dict[str, Any], net: Network) -> aws.efs.FileSystem:
    name = f"{s.CLUSTER}-{entry['name']}"
    fs = aws.efs.FileSystem(
        name,
        encrypted=True,
        performance_mode="generalPurpose",
        throughput_mode="elastic",
        tags={**s.TAGS, "Name": name},
    )
    aws.efs.MountTarget(
        f"{name}-mt",
        file_system_id=fs.id,
        subnet_id=net.subnet_id,
        security_groups=[net.cluster_sg.id],
    )
    return fs


def build(net: Network) -> FileSystems:
    """Create the file systems."""
    out = FileSystems()
    for entry in s.LUSTRE:
        fs = _lustre(entry, net)
        out.lustre[entry["name"]] = (fs.dns_name, fs.mount_name)
    for entry in s.NFS:
        efs = _efs(entry, net)
        out.nfs[entry["name"]] = (efs.dns_name, "/")
    return out
