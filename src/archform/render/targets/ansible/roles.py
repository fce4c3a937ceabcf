"""What goes into the Ansible project: roles, group variables, inventory, storage mounts.

Plain data only; `archform.render.targets.ansible.target` renders it through the templates.
Pinned versions carry their source in a comment; bump them here (and in the goldens).
"""

from __future__ import annotations

from dataclasses import dataclass

from archform.render.targets.ansible import local_nvme, nccl, validate_vars
from archform.render.targets.common.clouds import cloud, nccl_topo_vars
from archform.render.targets.common.training_view import TrainingView
from archform.spec import slurm
from archform.spec.models.training import Storage
from archform.spec.provider import spec_of

# Pinned component versions. A change here changes every generated project.
# group_vars/all.yml: (name, value) in file order; values are plain data or view records,
# written through the `ansible` filter.
GroupVars = list[tuple[str, object]]

VERSIONS: dict[str, str] = {
    # NVIDIA R570 production branch (docs.nvidia.com/datacenter/tesla/index.html); the driver,
    # fabric manager and libnvidia-nscq must be the same version or fabric manager refuses to start.
    "nvidia_driver_branch": "570",
    "nvidia_driver_version": "570.172.08",
    # DCGM 4 for CUDA 12 (package datacenter-gpu-manager-4-cuda12, service nvidia-dcgm).
    "dcgm_version": "4.2.3",
    # DOCA-Host with the doca-ofed profile (MLNX_OFED's successor from January 2025).
    "doca_version": "2.9.2",
    # EFA installer (bundles libfabric and aws-ofi-nccl); efa-installer.amazonaws.com.
    "efa_installer_version": "1.38.0",
    # NVIDIA/nccl-tests release tag.
    "nccl_tests_version": "v2.16.8",
    # NVIDIA/enroot and NVIDIA/pyxis releases.
    "enroot_version": "3.5.0",
    "pyxis_version": "0.20.0",
    # LBNL Node Health Check (github.com/mej/nhc).
    "nhc_version": "1.4.3",
}

# lfs setstripe counts per storage purpose (from
# https://wiki.lustre.org/Lustre_Striping_Best_Practices): files read by every rank -> wide (-1);
# one checkpoint shard per rank -> 1-4; small files (home, scratch) -> 1.
STRIPE_BY_PURPOSE = {
    "training_data": -1,
    "models": -1,
    "checkpoints": 4,
    "scratch": 1,
    "home": 1,
}


# With accounting on, slurm.conf enforces associations (AccountingStorageEnforce=
# associations,limits,qos): a user without one has every job rejected ("Invalid account or
# account/partition combination specified"). A blueprint that names no accounts gets this one,
# holding the cluster's local users (UID 1000-59999, Debian Policy 9.2.2 "dynamically allocated
# user accounts": https://www.debian.org/doc/debian-policy/ch-opersys.html#uid-and-gid-classes)
# as the controller's `getent passwd` lists them, and the operator running Ansible.
DEFAULT_ACCOUNT: dict[str, object] = {
    "name": "default",
    "description": "Local users of the cluster (archform default, no scheduler.accounts)",
    "users": [],
    "unix_group": None,
    "qos": [],
    "local_users": True,
}


def accounts(view: TrainingView) -> list[dict[str, object]]:
    """Sacctmgr accounts: the blueprint's, or the default one when accounting has none."""
    sched = view.scheduler
    listed = [{**a.model_dump(mode="json"), "local_users": False} for a in sched.accounts]
    if sched.accounting and not listed:
        return [dict(DEFAULT_ACCOUNT)]
    return listed


def roles_for(view: TrainingView) -> list[str]:
    """Roles the project ships, in site.yml order."""
    kinds = {s.kind for s in view.storage}
    sched = view.scheduler
    roles = ["common", "munge", "nvidia_driver", "fabric", "nccl"]
    if "lustre" in kinds:
        roles.append("lustre_client")
    if "nfs" in kinds:
        roles.append("nfs_client")
    if local_nvme.wanted(view):
        roles.append("local_nvme")
    if sched.containers == "pyxis":
        roles.append("pyxis_enroot")
    if sched.health_checks:
        roles.append("health")
    roles.append("slurm")
    return roles


@dataclass(frozen=True, slots=True)
class StorageMount:
    """One file system the nodes mount (group_vars lustre_mounts / nfs_mounts entry)."""

    name: str
    purpose: str
    path: str
    # On-prem endpoints are in the blueprint; cloud ones come from the Pulumi outputs
    # (inventory variables archform_lustre_outputs / archform_nfs_outputs) at run time.
    endpoint: str | None
    stripe_count: int


def _mount(view: TrainingView, storage: Storage) -> StorageMount:
    stripe = storage.stripe_count
    if stripe is None:
        stripe = STRIPE_BY_PURPOSE[storage.purpose]
    return StorageMount(
        name=storage.name,
        purpose=storage.purpose,
        path=storage.mount or f"/mnt/{storage.name}",
        endpoint=storage.endpoint if not spec_of(view.provider).cloud else None,
        stripe_count=stripe,
    )


def storage_mounts(view: TrainingView, kind: str) -> list[StorageMount]:
    """Mounts of one storage kind, in blueprint order."""
    return [_mount(view, s) for s in view.storage if s.kind == kind]


def group_vars(view: TrainingView) -> GroupVars:
    """Everything the roles need, derived from the blueprint (group_vars/all.yml)."""
    sched = view.scheduler
    fabric = view.fabric
    first = view.groups[0]
    rate_per_rail = fabric.gbps_per_node // max(1, fabric.rails)
    out: GroupVars = [
        ("archform_cluster", view.name),
        ("archform_provider", view.provider),
        ("archform_connection_local", view.connection == "local"),
        ("archform_set_hostname", view.connection != "local"),
        ("slurm_version", sched.version),
        # slurm_install_method (distro or build) comes from the node image (common/node_image.py);
        # a build is of the patch release the option table was read from unless the
        # blueprint names one.
        ("slurm_build_version", slurm.build_version(slurm.parse_version(sched.version))),
        ("slurm_controller", view.controller),
        ("slurm_backup_controller", view.backup_controller),
        ("slurm_accounting", bool(sched.accounting)),
        ("slurm_elastic", bool(sched.elastic)),
        ("slurm_gres", bool(view.gpu_cluster)),
        (
            "slurm_topology",
            view.fabric.topology.kind != "flat" and len(view.all_hostnames) > 1,
        ),
        ("slurm_pyxis", sched.containers == "pyxis"),
        ("slurm_partitions", [p.name for p in sched.partitions]),
        ("slurm_qos", [q.model_dump(mode="json") for q in sched.qos]),
        ("slurm_accounts", accounts(view)),
        ("nvidia_gpus_per_node", first.gpus_per_node),
        ("nvidia_fabric_manager", any(g.nvswitch for g in view.groups)),
        ("fabric_kind", fabric.kind),
        ("fabric_rails", fabric.rails),
        ("fabric_rate_gbps_per_rail", rate_per_rail),
        ("fabric_gpudirect_rdma", bool(fabric.gpudirect_rdma)),
        ("fabric_hcas", fabric.hcas or []),
        *((var, nccl.topo_file(first.instance_type) or "") for var in nccl_topo_vars()),
        ("lustre_mounts", storage_mounts(view, "lustre")),
        ("nfs_mounts", storage_mounts(view, "nfs")),
        (
            "archform_shared_home",
            any(
                s.kind in ("nfs", "lustre") and (s.mount or "") in ("/home", "/home/")
                for s in view.storage
            ),
        ),
        ("nfs_mount_options", cloud(view.provider).nfs_mount_options),
        ("enroot_local_path", cloud(view.provider).local_nvme_path),
        ("health_nhc", "nhc" in sched.health_checks),
        ("health_dcgm", "dcgm" in sched.health_checks),
        # srun MPI plugin for nccl-tests: PMIx (AWS samples), PMI-2 in Google's TCPXO example.
        ("nccl_tests_mpi", "pmi2" if fabric.kind == "gpudirect_tcpxo" else "pmix"),
    ]
    out += validate_vars.group_vars(view)
    out += sorted(VERSIONS.items())
    return out


@dataclass(frozen=True, slots=True)
class InventoryHosts:
    """Hosts of one inventory group, with their addresses (None: not known yet).

    `range` is the Ansible host range (gpu[001:032]) written instead of the names when no
    address is known and the names form one zero-padded range.
    """

    names: list[str]
    addresses: list[str | None]
    range: str | None = None


@dataclass(frozen=True, slots=True)
class Inventory:
    """The on-prem static inventory: controller, login and one group per node group."""

    controller: InventoryHosts
    login: InventoryHosts
    compute: dict[str, InventoryHosts]


def inventory_groups(view: TrainingView) -> Inventory:
    """On-prem static inventory: hosts per group, with addresses when the blueprint has them.

    Names without addresses are written as Ansible host ranges (gpu[001:032]) so the file
    stays small; the template says that addresses must be filled in.
    """
    controller_addr = None
    login_addrs: list[str | None] = [None] * len(view.login)
    if view.hosts is not None:
        controller_addr = view.hosts.controller.address
        login_addrs = [h.address for h in view.hosts.login]
    return Inventory(
        controller=InventoryHosts([view.controller], [controller_addr]),
        login=InventoryHosts(view.login, login_addrs),
        compute={g.name: InventoryHosts(g.hostnames, g.addresses) for g in view.groups},
    )
