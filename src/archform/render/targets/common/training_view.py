"""View-models: typed, pre-sorted data built from validated blueprints.

Every target builds on these so that Pulumi outputs, the Ansible inventory and the Slurm
configuration agree on names. Views are frozen dataclasses (mypy --strict checks every
field a target or template reads); blueprint sections are carried as their own frozen,
typed spec models (Fabric, Scheduler, Storage, ...). Templates only read attributes; every
value that enters generated text still goes through a typed quoting filter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from archform.render.hostlist import compress
from archform.spec.catalog import load_catalog
from archform.spec.models.training import (
    Fabric,
    Hosts,
    Network,
    NodeGroup,
    Scheduler,
    Storage,
    TrainingCluster,
    TrainingWorkload,
)


def node_names(cluster: TrainingCluster, group: NodeGroup) -> list[str]:
    """Compute node names: from `hosts` on-prem, else <cluster>-<group>NNN (min width 3)."""
    if cluster.hosts is not None and group is cluster.compute and cluster.hosts.compute:
        return [h.name for h in cluster.hosts.compute]
    width = max(3, len(str(group.nodes)))
    return [f"{cluster.name}-{group.name}{i:0{width}d}" for i in range(1, group.nodes + 1)]


def node_addresses(cluster: TrainingCluster, group: NodeGroup) -> list[str | None]:
    """Known addresses (on-prem inventory) per node, else None (cloud: from Pulumi outputs)."""
    if cluster.hosts is not None and group is cluster.compute and cluster.hosts.compute:
        return [h.address for h in cluster.hosts.compute]
    return [None] * group.nodes


def controller_name(cluster: TrainingCluster) -> str:
    """The Slurm controller host name."""
    if cluster.hosts is not None:
        return cluster.hosts.controller.name
    return f"{cluster.name}-ctl"


def gres_type(model: str) -> str:
    """Slurm GRES type for a GPU model: lowercase, '-' -> '_' (h100, a100_40gb)."""
    return model.lower().replace("-", "_")


@dataclass(frozen=True, slots=True)
class GroupView:
    """One node group, flattened for templates."""

    name: str
    nodes: int
    hostnames: list[str]
    addresses: list[str | None]
    hostlist: str
    instance_type: str | None
    purchase: str
    capacity_reservation_id: str | None
    gpu_model: str | None
    gpu_gres_type: str | None
    gpus_per_node: int
    gpu_memory_gib: float | None
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    cpus: int
    memory_mib: int
    real_memory_mib: int
    nvswitch: bool
    fabric_interfaces: int
    local_nvme_gib: float
    # OS CPUs local to each GPU (catalog gpu_affinity), for gres.conf Cores=.
    gpu_cpus: list[str]
    gpu_cpus_source: str | None


def group_view(cluster: TrainingCluster, group: NodeGroup) -> GroupView:
    """One node group, flattened for templates."""
    names = node_names(cluster, group)
    cpu = group.cpu
    sockets = cpu.sockets if cpu else 1
    cores = cpu.cores_per_socket if cpu else 1
    threads = cpu.threads_per_core if cpu else 1
    memory_mib = (group.memory_gib or 1) * 1024
    gpu = group.gpu
    info = load_catalog().instance(group.instance_type) if group.instance_type else None
    return GroupView(
        name=group.name,
        nodes=group.nodes,
        hostnames=names,
        addresses=node_addresses(cluster, group),
        hostlist=compress(names),
        instance_type=group.instance_type,
        purchase=group.purchase,
        capacity_reservation_id=group.capacity_reservation_id,
        gpu_model=gpu.model if gpu else None,
        gpu_gres_type=gres_type(gpu.model) if gpu else None,
        gpus_per_node=gpu.per_node if gpu else 0,
        gpu_memory_gib=gpu.memory_gib if gpu else None,
        sockets=sockets,
        cores_per_socket=cores,
        threads_per_core=threads,
        cpus=sockets * cores * threads,
        memory_mib=memory_mib,
        # Leave headroom for the OS and daemons: 5% or 2 GiB, whichever is larger, but
        # never below half of the node (tiny smoke nodes).
        real_memory_mib=max(memory_mib // 2, memory_mib - max(2048, memory_mib // 20)),
        nvswitch=bool(
            gpu and (g := load_catalog().gpu(gpu.model)) and g.nvswitch and gpu.per_node >= 8
        ),
        fabric_interfaces=info.fabric_interfaces if info else 0,
        local_nvme_gib=info.local_nvme_gib if info else 0,
        gpu_cpus=list(info.gpu_cpus) if info and gpu and info.gpu_count == gpu.per_node else [],
        gpu_cpus_source=info.gpu_cpus_source if info else None,
    )


def leaves(names: list[str], per_leaf: int) -> list[list[str]]:
    """Split node names into leaf switches of `per_leaf` nodes, in order."""
    count = max(1, math.ceil(len(names) / per_leaf))
    return [names[i * per_leaf : (i + 1) * per_leaf] for i in range(count)]


@dataclass(frozen=True, slots=True)
class TrainingView:
    """The shared view-model of a TrainingCluster."""

    name: str
    description: str
    owner: str
    purpose: str
    provider: str
    region: str
    zones: list[str]
    colocation: str
    network: Network
    groups: list[GroupView]
    all_hostnames: list[str]
    controller: str
    backup_controller: str | None
    login: list[str]
    connection: str
    hosts: Hosts | None
    fabric: Fabric
    storage: list[Storage]
    scheduler: Scheduler
    training: TrainingWorkload | None
    ssh_cidrs: list[str]
    labels: dict[str, str]
    gpu_cluster: bool


def training_view(cluster: TrainingCluster) -> TrainingView:
    """The shared view-model of a TrainingCluster."""
    groups = [group_view(cluster, g) for g in cluster.compute.groups]
    login = (
        [h.name for h in cluster.hosts.login]
        if cluster.hosts is not None
        else [f"{cluster.name}-login{i:02d}" for i in range(1, cluster.scheduler.login_nodes + 1)]
    )
    return TrainingView(
        name=cluster.name,
        description=cluster.description or "",
        owner=cluster.owner or "",
        purpose=cluster.purpose,
        provider=cluster.placement.provider,
        region=cluster.placement.primary_region,
        zones=list(cluster.placement.zones),
        colocation=cluster.placement.colocation,
        network=cluster.placement.network,
        groups=groups,
        all_hostnames=[n for g in groups for n in g.hostnames],
        controller=controller_name(cluster),
        backup_controller=f"{cluster.name}-ctl2" if cluster.scheduler.backup_controller else None,
        login=login,
        connection=cluster.hosts.connection if cluster.hosts else "ssh",
        hosts=cluster.hosts,
        fabric=cluster.fabric,
        storage=list(cluster.storage),
        scheduler=cluster.scheduler,
        training=cluster.training,
        ssh_cidrs=list(cluster.access.ssh_cidrs),
        labels=dict(sorted(cluster.labels.items())),
        gpu_cluster=any(g.gpus_per_node for g in groups),
    )
