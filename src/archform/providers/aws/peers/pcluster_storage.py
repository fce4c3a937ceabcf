"""ParallelCluster 3 SharedStorage and Tags, mapped onto archform storage and labels.

See parallelcluster.py for the reader and docs/peers/parallelcluster.md for what maps.
"""

from __future__ import annotations

import re

from archform.providers.aws.peers.pcluster_schema import (
    DEFAULT_EBS_ENCRYPTED,
    DEFAULT_EBS_SIZE_GIB,
    DEFAULT_EFS_ENCRYPTED,
    DEFAULT_FSX_DEPLOYMENT,
    FSX_DEPLOYMENT_TYPES,
    STORAGE_TYPES,
)
from archform.spec.paths import Loc
from archform.spec.peers.mapper import Mapper

_GIB_PER_TIB = 1024
EFS_ASSUMED_TIB = 1.0


# -- storage -----------------------------------------------------------------------------

_PURPOSES = (
    (re.compile(r"checkpoint|ckpt", re.I), "checkpoints"),
    (re.compile(r"^/home(/|$)"), "home"),
    (re.compile(r"scratch|tmp", re.I), "scratch"),
    (re.compile(r"model", re.I), "models"),
    (re.compile(r"data|train|corpus", re.I), "training_data"),
)
_STORAGE_NAME = re.compile(r"[^a-z0-9-]+")


def _purpose(mount: str, kind: str) -> tuple[str, str]:
    for pattern, purpose in _PURPOSES:
        if pattern.search(mount):
            return purpose, f"read from MountDir {mount}"
    if kind == "lustre":
        return "training_data", "a Lustre file system, read as the training data's"
    return "home", "a shared NFS file system, read as home/shared software"


def storage(m: Mapper) -> None:
    """Map SharedStorage onto archform storage."""
    shares = m.get(("SharedStorage",))
    if not isinstance(shares, list):
        return
    index = 0
    names: set[str] = set()
    m.anchor(("storage",), ("SharedStorage",))
    for s in range(len(shares)):
        src: Loc = ("SharedStorage", s)
        kind = m.one_of((*src, "StorageType"), STORAGE_TYPES)
        if kind is None:
            continue
        if kind == "FileCache":
            m.unmapped(src, "Amazon File Cache is not modelled by archform")
            continue
        if _share(m, ("storage", index), src, kind, names):
            index += 1


def _share(m: Mapper, base: Loc, src: Loc, kind: str, names: set[str]) -> bool:
    mount = str(m.get((*src, "MountDir"), ""))
    archform_kind = "lustre" if kind == "FsxLustre" else "nfs"
    m.anchor(base, src)
    raw_name = str(m.get((*src, "Name"), "storage"))
    name = _STORAGE_NAME.sub("-", raw_name.lower()).strip("-")[:39] or "storage"
    if not name[0].isalpha():
        name = "s-" + name[:37]
    while name in names:
        name = name[:36] + f"-{len(names)}"
    names.add(name)
    m.put((*base, "name"), name, (*src, "Name"))
    m.put(
        (*base, "kind"),
        archform_kind,
        (*src, "StorageType"),
        why={
            "FsxLustre": "",
            "Efs": "Amazon EFS is NFS",
            "Ebs": "the head node exports the EBS volume over NFS",
            "FsxOpenZfs": "FSx for OpenZFS is mounted over NFS",
            "FsxOntap": "FSx for NetApp ONTAP is mounted over NFS",
        }[kind],
    )
    purpose, why = _purpose(mount, archform_kind)
    m.put((*base, "purpose"), purpose, (*src, "MountDir"), why=why)
    m.unmapped(
        (*src, "MountDir"),
        f"what the share holds is not in ParallelCluster's format; archform reads it as "
        f"{purpose} ({why}); archform import writes it as storage purpose, to correct there",
    )
    if mount:
        m.put((*base, "mount"), mount, (*src, "MountDir"))
    settings: Loc = (*src, f"{kind}Settings")
    if kind == "FsxLustre":
        _lustre(m, base, settings)
    elif kind == "Efs":
        m.put(
            (*base, "capacity_tib"),
            EFS_ASSUMED_TIB,
            settings if m.has(settings) else src,
            why="Amazon EFS is elastic (no size in the file): 1 TiB assumed for the estimate",
        )
        _encrypted(m, base, settings, DEFAULT_EFS_ENCRYPTED, "SharedEfs")
        m.rest(settings, ("Encrypted",))
    elif kind == "Ebs":
        size = m.get((*settings, "Size"))
        if isinstance(size, int) and not isinstance(size, bool):
            tib = round(size / _GIB_PER_TIB, 4)
            m.put((*base, "capacity_tib"), tib, (*settings, "Size"), why=f"{size} GiB")
        else:
            tib = round(DEFAULT_EBS_SIZE_GIB / _GIB_PER_TIB, 4)
            why = f"ParallelCluster's default Size, {DEFAULT_EBS_SIZE_GIB} GiB"
            m.put((*base, "capacity_tib"), tib, settings if m.has(settings) else src, why=why)
        _encrypted(m, base, settings, DEFAULT_EBS_ENCRYPTED, "Ebs")
        m.rest(settings, ("Size", "Encrypted"))
    else:
        m.rest(settings, ())
    return True


def _encrypted(m: Mapper, base: Loc, settings: Loc, default: bool, what: str) -> None:
    at = (*settings, "Encrypted")
    value = m.get(at)
    if isinstance(value, bool):
        m.put((*base, "encrypted"), value, at)
    else:
        why = f"ParallelCluster's default ({what} Encrypted: {str(default).lower()})"
        m.put((*base, "encrypted"), default, at, why=why)


def _lustre(m: Mapper, base: Loc, settings: Loc) -> None:
    deployment = m.one_of((*settings, "DeploymentType"), FSX_DEPLOYMENT_TYPES)
    existing = m.has((*settings, "FileSystemId")) or m.has((*settings, "BackupId"))
    at = (*settings, "DeploymentType")
    if deployment is None and not existing:
        deployment = DEFAULT_FSX_DEPLOYMENT
        why = f"ParallelCluster's default DeploymentType {DEFAULT_FSX_DEPLOYMENT}"
    else:
        why = ""
    if deployment is not None:
        value = "scratch" if deployment.startswith("SCRATCH") else "persistent"
        m.put((*base, "deployment"), value, at if m.has(at) else settings, why=why)
    if existing:
        m.unmapped(
            (*settings, "FileSystemId") if m.has((*settings, "FileSystemId")) else settings,
            "an existing file system: its size and throughput are not in the file",
        )
    size = m.get((*settings, "StorageCapacity"))
    if isinstance(size, int) and not isinstance(size, bool):
        tib = round(size / _GIB_PER_TIB, 4)
        m.put((*base, "capacity_tib"), tib, (*settings, "StorageCapacity"), why=f"{size} GiB")
    throughput = m.get((*settings, "PerUnitStorageThroughput"))
    if throughput is not None:
        m.put(
            (*base, "throughput_mbps_per_tib"), throughput, (*settings, "PerUnitStorageThroughput")
        )
    source: Loc | None = None
    if m.has((*settings, "ImportPath")):
        source = (*settings, "ImportPath")
    associations = m.get((*settings, "DataRepositoryAssociations"))
    if isinstance(associations, list) and associations:
        for d in range(len(associations)):
            dra: Loc = (*settings, "DataRepositoryAssociations", d)
            if source is None and m.has((*dra, "DataRepositoryPath")):
                source = (*dra, "DataRepositoryPath")
                m.rest(dra, ("DataRepositoryPath", "Name", "FileSystemPath"))
            else:
                m.unmapped(dra, "archform links one data repository per file system")
    if source is not None:
        m.put((*base, "source"), m.get(source), source)
    m.rest(
        settings,
        (
            "DeploymentType",
            "StorageCapacity",
            "PerUnitStorageThroughput",
            "ImportPath",
            "DataRepositoryAssociations",
            "FileSystemId",
            "BackupId",
        ),
    )


# -- tags ----------------------------------------------------------------------------------

_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_.-]{0,62}$")
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9._-]{0,63}$")


def tags(m: Mapper) -> None:
    """Map cluster Tags onto archform labels."""
    tags = m.get(("Tags",))
    if not isinstance(tags, list):
        return
    for t, tag in enumerate(tags):
        src: Loc = ("Tags", t)
        if not isinstance(tag, dict):
            continue
        key, value = str(tag.get("Key", "")), str(tag.get("Value", ""))
        if _LABEL_KEY.match(key) and _LABEL_VALUE.match(value):
            m.put(("labels", key), value, (*src, "Value") if "Value" in tag else src)
        else:
            m.unmapped(src, f"tag {key!r} is not an archform label (lower-case key, plain value)")
