"""AWS ParallelCluster 3 cluster configurations, read as TrainingCluster blueprints.

A file is one when it is a mapping with a top-level `HeadNode` or `Scheduling` (the two
sections every ParallelCluster 3 config has) and no `kind`. The keys follow ParallelCluster's
own schema (pcluster_schema); what maps and what does not is docs/peers/parallelcluster.md.

Zones: a subnet's Availability Zone is not in the file and not knowable offline. archform
reads each queue as placed in one zone (the zone of its subnet), and a queue listing more
than one subnet gets a warning: ParallelCluster spreads it over every zone those subnets
are in (multi-AZ queues), which breaks EFA and placement groups when they differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from archform.providers.aws.peers.pcluster_schema import (
    CAPACITY_TYPES,
    DEFAULT_ALLOWED_IPS,
    DEFAULT_MAX_COUNT,
    DEFAULT_MIN_COUNT,
    LISTS,
    SCHEDULERS,
    SCHEMAS,
    TYPES,
)
from archform.providers.aws.peers.pcluster_storage import storage, tags
from archform.spec.catalog import load_catalog
from archform.spec.paths import Loc
from archform.spec.peers.mapper import Mapper

NAME = "parallelcluster"
TITLE = "AWS ParallelCluster 3 cluster configuration"
DOCS = "https://docs.aws.amazon.com/parallelcluster/latest/ug/cluster-configuration-file-v3.html"

_TOP = re.compile(r"^(?:HeadNode|Scheduling)[ \t]*:", re.MULTILINE)
_KIND = re.compile(r"^kind[ \t]*:", re.MULTILINE)

# What archform does with keys it does not map (reported once each, as info findings).
REASONS: dict[str, str] = {
    "Image": "archform picks the node image itself (compute.image)",
    "Monitoring": "monitoring is not part of archform's architecture checks",
    "Iam": "IAM roles and policies are not modelled by archform",
    "DirectoryService": "directory services are not modelled by archform",
    "CustomActions": "bootstrap scripts are not modelled (archform.extensions holds them)",
    "CustomSlurmSettings": "archform takes slurm.conf options in scheduler.slurm_conf, per cluster",
    "SpotPrice": "archform does not model a spot price cap",
    "GdrSupport": "no effect since ParallelCluster 3.0.2: GPUDirect RDMA over EFA is on "
    "whenever the instance supports it",
    "Dcv": "NICE DCV remote desktops are not modelled by archform",
    "LocalStorage": "root and ephemeral volumes come from archform's catalog",
    "ComputeSettings": "root and ephemeral volumes come from archform's catalog",
    "KeyName": "SSH key pairs are not part of the blueprint",
}


def sniff(text: str) -> bool:
    """Line-based: a top-level `HeadNode:` or `Scheduling:` and no `kind:`."""
    return bool(_TOP.search(text)) and not _KIND.search(text)


def claims(data: object) -> bool:
    """A mapping with `HeadNode` or `Scheduling` at the top and no archform `kind`."""
    return isinstance(data, dict) and ("HeadNode" in data or "Scheduling" in data)


@dataclass
class _Group:
    """One ComputeResource, as an archform node group."""

    src: Loc
    queue: Loc
    name: str
    instance: str | None
    instance_src: Loc
    gpus: int
    model: str | None


def read(m: Mapper) -> None:
    """Map a ParallelCluster 3 config onto a TrainingCluster."""
    _check(m, (), "Cluster")
    for key in ("HeadNode", "Scheduling"):
        if not m.has((key,)):
            m.error((), f"{key}: Missing data for required field.", f"add a {key} section")
    if m.problems:
        return
    _region(m)
    _head_node(m)
    groups = _scheduling(m)
    storage(m)
    tags(m)
    _unmapped(m, (), ("Region", "HeadNode", "Scheduling", "SharedStorage", "Tags", "LoginNodes"))
    _login_nodes(m)
    if groups and all(g.gpus == 0 for g in groups):
        m.put(("purpose",), "hpc", groups[0].instance_src, why="no compute resource has GPUs")


# -- schema ------------------------------------------------------------------------------


def _check(m: Mapper, src: Loc, schema: str) -> None:
    node = m.get(src)
    if node is None:
        return
    if not isinstance(node, dict):
        m.error(src, "Invalid input type.", "this key holds a mapping of settings")
        return
    keys = SCHEMAS[schema]
    m.keys(src, keys)
    for key, value in node.items():
        wanted = TYPES.get((schema, str(key)))
        if wanted is not None and not _is(value, wanted):
            m.error((*src, key), f"Not a valid {wanted}.", prefer="value")
    for key, child in keys.items():
        if child is None or key not in node:
            continue
        if key in LISTS:
            value = node[key]
            if not isinstance(value, list):
                m.error((*src, key), "Not a valid list.", "write it as a list of mappings")
                continue
            for i in range(len(value)):
                _check(m, (*src, key, i), child)
        else:
            _check(m, (*src, key), child)


def _is(value: Any, wanted: str) -> bool:
    if wanted == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if wanted == "boolean":
        return isinstance(value, bool)
    if wanted == "list":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, str)


def _one_of(m: Mapper, src: Loc, allowed: tuple[str, ...]) -> str | None:
    return m.one_of(src, allowed)


def _unmapped(m: Mapper, src: Loc, mapped: tuple[str, ...]) -> None:
    m.rest(src, mapped, REASONS)


# -- sections ----------------------------------------------------------------------------


def _region(m: Mapper) -> None:
    region = m.get(("Region",))
    if region is None:
        m.error(
            (),
            "Region: not set in the file (ParallelCluster then takes it from --region or "
            "AWS_DEFAULT_REGION); archform reads the file alone",
            "add `Region: us-east-1` (your cluster's region) at the top",
        )
        return
    m.put(("placement", "provider"), "aws", ("Region",), why="ParallelCluster runs on AWS")
    m.put(("placement", "region"), region, ("Region",))


def _head_node(m: Mapper) -> None:
    head: Loc = ("HeadNode",)
    if m.has((*head, "InstanceType")):
        m.put(
            ("scheduler", "controller_instance_type"),
            m.get((*head, "InstanceType")),
            (*head, "InstanceType"),
        )
    subnet = m.get((*head, "Networking", "SubnetId"))
    if subnet is not None:
        _subnet(m, subnet, (*head, "Networking", "SubnetId"))
    _unmapped(m, (*head, "Networking"), ("SubnetId",))
    allowed: Loc = (*head, "Ssh", "AllowedIps")
    ips = m.get(allowed)
    if ips is None:
        m.put(
            ("access", "ssh_cidrs"),
            [DEFAULT_ALLOWED_IPS],
            allowed,
            why="ParallelCluster's default when HeadNode.Ssh.AllowedIps is not set",
        )
    elif isinstance(ips, str) and ips.startswith("pl-"):
        m.unmapped(allowed, "a managed prefix list: its ranges are not in the file")
    else:
        m.put(("access", "ssh_cidrs"), [ips], allowed)
    _unmapped(m, (*head, "Ssh"), ("AllowedIps",))
    _unmapped(m, head, ("InstanceType", "Networking", "Ssh"))


def _subnet(m: Mapper, subnet: Any, src: Loc) -> None:
    current = m.out.get("placement", {}).get("network", {}).get("existing_subnet_ids", [])
    if subnet in current:
        return
    loc = ("placement", "network", "existing_subnet_ids", len(current))
    m.put(loc, subnet, src)


def _login_nodes(m: Mapper) -> None:
    pools = m.get(("LoginNodes", "Pools"))
    if not isinstance(pools, list) or not pools:
        m.put(
            ("scheduler", "login_nodes"),
            0,
            ("HeadNode",),
            why="no LoginNodes section: users log in on the head node",
        )
        return
    total = 0
    for i, pool in enumerate(pools):
        count = pool.get("Count") if isinstance(pool, dict) else None
        if isinstance(count, int) and not isinstance(count, bool):
            total += count
        _unmapped(m, ("LoginNodes", "Pools", i), ("Count", "Name"))
    m.put(("scheduler", "login_nodes"), total, ("LoginNodes", "Pools"), why="sum of pool Counts")


def _scheduling(m: Mapper) -> list[_Group]:
    sched: Loc = ("Scheduling",)
    scheduler = _one_of(m, (*sched, "Scheduler"), SCHEDULERS)
    if scheduler == "awsbatch":
        m.error(
            (*sched, "Scheduler"),
            "awsbatch clusters are not read by archform",
            "archform models Slurm clusters (Scheduler: slurm)",
            prefer="value",
        )
        return []
    if scheduler is not None:
        m.put(("scheduler", "kind"), "slurm", (*sched, "Scheduler"))
    settings = (*sched, "SlurmSettings")
    if m.has((*settings, "Database")) or m.has((*settings, "ExternalSlurmdbd")):
        key = "Database" if m.has((*settings, "Database")) else "ExternalSlurmdbd"
        m.put(("scheduler", "accounting"), True, (*settings, key), why="slurmdbd configured")
    _unmapped(m, settings, ("Database", "ExternalSlurmdbd"))
    _unmapped(m, sched, ("Scheduler", "SlurmSettings", "SlurmQueues"))
    queues = m.get((*sched, "SlurmQueues"))
    if not isinstance(queues, list) or not queues:
        m.error((*sched, "SlurmQueues"), "Missing data for required field.", "add a queue")
        return []
    groups: list[_Group] = []
    names: set[str] = set()
    health = False
    for q in range(len(queues)):
        queue: Loc = (*sched, "SlurmQueues", q)
        groups.extend(_queue_groups(m, queue, names))
        health = health or _gpu_health(m, queue)
    if m.problems or not groups:
        return groups
    primary = next((g for g in groups if g.gpus > 0), groups[0])
    ordered = [primary]
    for g in groups:
        if g is primary:
            continue
        if g.gpus and g.model != primary.model:
            m.unmapped(
                g.instance_src,
                f"a queue of other GPUs ({g.model} on {g.instance}): archform checks one GPU "
                f"model on one fabric per cluster, the first GPU compute resource's "
                f"({primary.model} on {primary.instance}); this compute resource is not checked",
            )
            continue
        ordered.append(g)
    groups = ordered
    for index, group in enumerate(ordered):
        base: Loc = ("compute",) if index == 0 else ("compute", "extra_groups", index - 1)
        _put_group(m, base, group)
    _partitions(m, queues, ordered)
    _fabric_and_placement(m, primary)
    m.put(
        ("scheduler", "health_checks"),
        ["dcgm"] if health else [],
        (*sched, "SlurmQueues"),
        why="HealthChecks.Gpu.Enabled (DCGM diagnostics at job start)"
        if health
        else "no HealthChecks.Gpu.Enabled: ParallelCluster runs no node health checks",
    )
    return ordered


def _gpu_health(m: Mapper, queue: Loc) -> bool:
    found = m.get((*queue, "HealthChecks", "Gpu", "Enabled")) is True
    resources = m.get((*queue, "ComputeResources"))
    for c in range(len(resources) if isinstance(resources, list) else 0):
        found = found or m.get((*queue, "ComputeResources", c, "HealthChecks", "Gpu", "Enabled"))
    return bool(found)


_GROUP_CHARS = re.compile(r"[^a-z0-9]+")


def _group_name(raw: Any, names: set[str]) -> str:
    base = _GROUP_CHARS.sub("", str(raw).lower()) or "group"
    if not base[0].isalpha():
        base = "g" + base
    base = base[:16]
    name, n = base, 2
    while name in names:
        suffix = str(n)
        name, n = base[: 16 - len(suffix)] + suffix, n + 1
    names.add(name)
    return name


def _queue_groups(m: Mapper, queue: Loc, names: set[str]) -> list[_Group]:
    out: list[_Group] = []
    _one_of(m, (*queue, "CapacityType"), CAPACITY_TYPES)
    subnets = m.get((*queue, "Networking", "SubnetIds"))
    if isinstance(subnets, list):
        for s, subnet in enumerate(subnets):
            _subnet(m, subnet, (*queue, "Networking", "SubnetIds", s))
        if len(subnets) > 1:
            m.warn(
                (*queue, "Networking", "SubnetIds"),
                f"{len(subnets)} subnets: ParallelCluster spreads this queue over every "
                "Availability Zone they are in (a multi-AZ queue), which a file alone cannot "
                "tell; archform reads the queue as one zone. EFA and placement groups stop at "
                "a zone's edge: list one subnet for a training queue",
            )
    _unmapped(m, (*queue, "Networking"), ("SubnetIds", "PlacementGroup"))
    _unmapped(
        m,
        queue,
        (
            "Name",
            "CapacityType",
            "CapacityReservationTarget",
            "ComputeResources",
            "Networking",
            "HealthChecks",
            "JobExclusiveAllocation",
        ),
    )
    resources = m.get((*queue, "ComputeResources"))
    if not isinstance(resources, list) or not resources:
        m.error((*queue, "ComputeResources"), "Missing data for required field.")
        return out
    catalog = load_catalog()
    for c in range(len(resources)):
        src: Loc = (*queue, "ComputeResources", c)
        instance, instance_src = _instance(m, src)
        info = catalog.instance(instance) if instance else None
        out.append(
            _Group(
                src,
                queue,
                _group_name(m.get((*src, "Name"), "group"), names),
                instance,
                instance_src,
                info.gpu_count if info else 0,
                info.gpu_model if info else None,
            )
        )
        _unmapped(
            m,
            src,
            (
                "Name",
                "InstanceType",
                "Instances",
                "MaxCount",
                "MinCount",
                "Efa",
                "CapacityReservationTarget",
                "Networking",
                "HealthChecks",
            ),
        )
        _unmapped(m, (*src, "Efa"), ("Enabled",))
    return out


def _instance(m: Mapper, src: Loc) -> tuple[str | None, Loc]:
    if m.has((*src, "InstanceType")):
        return str(m.get((*src, "InstanceType"))), (*src, "InstanceType")
    items = m.get((*src, "Instances"))
    if isinstance(items, list) and items and isinstance(items[0], dict):
        for i in range(1, len(items)):
            m.unmapped(
                (*src, "Instances", i),
                "an archform node group has one instance type; the first one is checked",
            )
        first = (*src, "Instances", 0, "InstanceType")
        if m.has(first):
            return str(m.get(first)), first
    m.error(src, "InstanceType or Instances: one of them is required.")
    return None, src


def _put_group(m: Mapper, base: Loc, g: _Group) -> None:
    src = g.src
    m.anchor(base, src)
    written = m.get((*src, "Name"))
    why = "" if written == g.name else f"ComputeResource name {written!r}, as an archform name"
    m.put((*base, "name"), g.name, (*src, "Name"), why=why)
    if g.instance is not None:
        m.put((*base, "instance_type"), g.instance, g.instance_src)
    if m.has((*src, "MaxCount")):
        m.put((*base, "nodes"), m.get((*src, "MaxCount")), (*src, "MaxCount"))
    else:
        m.put((*base, "nodes"), DEFAULT_MAX_COUNT, src, why="ParallelCluster's default MaxCount")
    capacity = m.get((*g.queue, "CapacityType"))
    reservation_src: Loc = (*src, "CapacityReservationTarget", "CapacityReservationId")
    if not m.has(reservation_src):
        reservation_src = (*g.queue, "CapacityReservationTarget", "CapacityReservationId")
    reservation = m.get(reservation_src)
    if reservation is not None:
        m.put((*base, "capacity_reservation_id"), reservation, reservation_src)
    capacity_src: Loc = (*g.queue, "CapacityType")
    if capacity == "SPOT":
        m.put((*base, "purchase"), "spot", capacity_src)
    elif capacity == "CAPACITY_BLOCK":
        m.put((*base, "purchase"), "capacity_block", capacity_src)
    elif reservation is not None:
        m.put((*base, "purchase"), "reserved", reservation_src, why="an On-Demand reservation")
    for target in ((*src, "CapacityReservationTarget"), (*g.queue, "CapacityReservationTarget")):
        _unmapped(m, target, ("CapacityReservationId",))
    if base == ("compute",):
        low = m.get((*src, "MinCount"), DEFAULT_MIN_COUNT)
        high = m.get((*src, "MaxCount"), DEFAULT_MAX_COUNT)
        if isinstance(low, int) and isinstance(high, int) and low < high:
            at = (*src, "MinCount") if m.has((*src, "MinCount")) else src
            m.put(
                ("scheduler", "elastic"),
                True,
                at,
                why=f"MinCount {low} < MaxCount {high}: nodes above MinCount are powered "
                "up on demand",
            )


def _partitions(m: Mapper, queues: list[Any], groups: list[_Group]) -> None:
    index = 0
    for q in range(len(queues)):
        queue: Loc = ("Scheduling", "SlurmQueues", q)
        mine = [g.name for g in groups if g.queue == queue]
        if not mine:
            continue
        loc: Loc = ("scheduler", "partitions", index)
        first, index = index == 0, index + 1
        m.anchor(loc, queue)
        m.put((*loc, "name"), m.get((*queue, "Name")), (*queue, "Name"))
        m.put(
            (*loc, "default"),
            first,
            (*queue, "Name"),
            why="ParallelCluster makes the first queue Slurm's default partition",
        )
        exclusive = m.get((*queue, "JobExclusiveAllocation"), False)
        at = (*queue, "JobExclusiveAllocation")
        m.put(
            (*loc, "exclusive"),
            exclusive is True,
            at if m.has(at) else (*queue, "Name"),
            why="" if m.has(at) else "ParallelCluster's default JobExclusiveAllocation: false",
        )
        m.put((*loc, "groups"), mine, (*queue, "ComputeResources"))


def _placement_group(m: Mapper, g: _Group) -> tuple[bool | None, Loc]:
    for pg in (
        (*g.src, "Networking", "PlacementGroup"),
        (*g.queue, "Networking", "PlacementGroup"),
    ):
        if not m.has(pg):
            continue
        enabled = m.get((*pg, "Enabled"))
        named = m.has((*pg, "Id")) or m.has((*pg, "Name"))
        if named:
            key = "Id" if m.has((*pg, "Id")) else "Name"
            m.unmapped((*pg, key), "archform creates its own placement group; this one is not kept")
        if enabled is False:
            return False, (*pg, "Enabled")
        if enabled is True or named:
            return True, (*pg, "Enabled") if enabled is True else pg
    return None, (*g.queue, "Networking")


def _fabric_and_placement(m: Mapper, g: _Group) -> None:
    efa = m.get((*g.src, "Efa", "Enabled")) is True
    info = load_catalog().instance(g.instance) if g.instance else None
    if info is not None:
        if efa and info.fabric_kind != "efa":
            m.error(
                (*g.src, "Efa", "Enabled"),
                f"Instance type '{g.instance}' does not support EFA.",
                "ParallelCluster's EfaValidator refuses this too; set Efa.Enabled: false",
            )
            return
        if efa:
            m.put(("fabric", "kind"), "efa", (*g.src, "Efa", "Enabled"))
        elif info.fabric_kind == "efa":
            at = (*g.src, "Efa") if m.has((*g.src, "Efa")) else g.instance_src
            why = "Efa.Enabled is not true: NCCL falls back to TCP over the ENA interface"
            m.put(("fabric", "kind"), "ethernet", at, why=why)
            m.put(("fabric", "gbps_per_node"), int(info.ethernet_gbps), at, why=why)
    enabled, at = _placement_group(m, g)
    capacity_block = m.get((*g.queue, "CapacityType")) == "CAPACITY_BLOCK"
    if enabled:
        m.put(("placement", "colocation"), "cluster", at)
    elif enabled is None and capacity_block:
        m.put(
            ("placement", "colocation"),
            "cluster",
            (*g.queue, "CapacityType"),
            why="EC2 Capacity Blocks are colocated in an EC2 UltraCluster",
        )
    else:
        why = "" if enabled is False else "no PlacementGroup: ParallelCluster's default is off"
        m.put(("placement", "colocation"), "none", at, why=why)
