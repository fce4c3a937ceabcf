"""Google Cluster Toolkit (gcluster) blueprints read as a TrainingCluster.

Facts from Cluster Toolkit's blueprint structs (pkg/config/config.go: blueprint_name, vars,
deployment_groups[].modules[] with id/source/kind/use/outputs/settings, parsed with known
fields only) and its modules' variables (schedmd-slurm-gcp-v6-nodeset: machine_type,
node_count_static, node_count_dynamic_max, enable_spot_vm, enable_placement, zone,
reservation_name; -partition: partition_name, is_default, exclusive; file-system/filestore:
local_mount, size_gb (default 2560), filestore_tier; file-system/managed-lustre:
local_mount, size_gib (default 36000), per_unit_storage_throughput (default 500),
import_gcs_bucket_uri). See docs/peers/cluster-toolkit.md.
"""

from __future__ import annotations

import re
from typing import Any

from archform.providers.gcp.peers.ct_wiring import REF, Wiring, wire
from archform.spec.catalog import load_catalog
from archform.spec.paths import Loc
from archform.spec.peers.mapper import Mapper

NAME = "cluster-toolkit"
TITLE = "Cluster Toolkit blueprint"
DOCS = "https://cloud.google.com/cluster-toolkit/docs/setup/cluster-blueprint"

TOP_KEYS = (
    "blueprint_name",
    "ghpc_version",
    "validators",
    "validation_level",
    "vars",
    "deployment_groups",
    "terraform_backend_defaults",
    "terraform_providers",
    "toolkit_modules_url",
    "toolkit_modules_version",
)
GROUP_KEYS = ("group", "terraform_backend", "terraform_providers", "modules", "kind")
MODULE_KEYS = ("source", "kind", "id", "use", "outputs", "settings", "required_apis")
_TOP = re.compile(r"^(blueprint_name|deployment_groups):", re.MULTILINE)
_KIND = re.compile(r"^kind:", re.MULTILINE)
_REF = re.compile(r"\$\(vars\.([A-Za-z0-9_]+)\)")
NODESET = "schedmd-slurm-gcp-v6-nodeset"
PARTITION = "schedmd-slurm-gcp-v6-partition"
GIB_PER_TIB = 1024
NETWORKS = {
    "vpc": "module {source}: archform creates the cluster's VPC itself (network.cidr); "
    "its settings are not checked",
    "multivpc": "module {source}: archform creates the GPU VPCs itself (network.gpu_cidr); "
    "read only as the nodesets' additional_networks",
    "gpu-rdma-vpc": "module {source}: archform creates the RDMA VPC itself "
    "(network.rdma_cidr); read only as the nodesets' additional_networks",
}
DEFAULT_GROUP = "gpu"  # archform's name of the first node group (compute.name's default)


def sniff(text: str) -> bool:
    """Line-based: a top-level `blueprint_name:` or `deployment_groups:` and no `kind:`."""
    return bool(_TOP.search(text)) and not _KIND.search(text)


def claims(data: object) -> bool:
    """A mapping with `deployment_groups` (gcluster's required list of groups)."""
    return isinstance(data, dict) and "deployment_groups" in data


def _not_found(struct: str) -> str:
    return f"field not found in type config.{struct}"


def read(m: Mapper) -> None:
    """Map a Cluster Toolkit blueprint onto a TrainingCluster."""
    m.keys((), TOP_KEYS, what=_not_found("Blueprint"))
    groups = m.get(("deployment_groups",))
    modules: list[Loc] = []
    if isinstance(groups, list):
        for g, group in enumerate(groups):
            m.keys(("deployment_groups", g), GROUP_KEYS, what=_not_found("Group"))
            mods = group.get("modules") if isinstance(group, dict) else None
            for i in range(len(mods) if isinstance(mods, list) else 0):
                src: Loc = ("deployment_groups", g, "modules", i)
                m.keys(src, MODULE_KEYS, what=_not_found("Module"))
                modules.append(src)
    if m.problems:
        return
    wiring = wire(m, modules)
    if m.problems:
        return
    name = m.get(("vars", "deployment_name"))
    if isinstance(name, str) and re.fullmatch(r"[a-z][a-z0-9-]{0,38}", name):
        m.name = name
    region = m.get(("vars", "region"))
    m.put(("placement", "provider"), "gcp", ("vars",), why="Cluster Toolkit deploys on GCP")
    if isinstance(region, str):
        m.put(("placement", "region"), region, ("vars", "region"))
    _modules(m, modules, wiring)
    used = set(_REF.findall(repr(m.get(("deployment_groups",)))))
    m.rest(("vars",), ("region", "deployment_name", "zone", *sorted(used)))


def _setting(m: Mapper, module: Loc, key: str) -> tuple[Loc, Any] | None:
    """A module setting with `$(vars.x)` resolved as gcluster does (whole or in a string).

    A whole `$(id.output)` is a Terraform output, known only once deployed: reported as not
    mapped (wire() has checked the module and output exist).
    """
    src: Loc = (*module, "settings", key)
    if not m.has(src):
        return None
    value = m.get(src)
    if isinstance(value, str):
        whole = _REF.fullmatch(value)
        if whole:
            return src, m.get(("vars", whole.group(1)))
        output = REF.fullmatch(value)
        if output:
            why = f"module {output.group(1)}'s output {output.group(2)}: known only once deployed"
            m.unmapped(src, why)
            return None
        value = _REF.sub(lambda r: str(m.get(("vars", r.group(1)), r.group(0))), value)
    return src, value


def _modules(m: Mapper, modules: list[Loc], wiring: Wiring) -> None:
    nodesets: dict[str, str] = {}  # module id -> archform node group name
    storage = 0
    partitions = 0
    for module in modules:
        source = str(m.get((*module, "source"), ""))
        ident = str(m.get((*module, "id")))
        if source.endswith(NODESET):
            nodesets[ident] = _nodeset(m, module, len(nodesets), wiring)
        elif source.endswith("compute/gke-node-pool"):
            _gke_pool(m, module, len(nodesets), wiring)
            nodesets[ident] = DEFAULT_GROUP
        elif source.endswith(PARTITION):
            _partition(m, module, partitions, nodesets, wiring)
            partitions += 1
        elif source.endswith(("file-system/filestore", "file-system/managed-lustre")):
            _storage(m, module, storage, source.endswith("managed-lustre"))
            storage += 1
        else:
            m.unmapped(
                (*module, "source"),
                NETWORKS.get(source.rsplit("/", 1)[-1], "").format(source=source)
                or f"module {source} has no archform counterpart",
            )
    zone = m.get(("vars", "zone"))
    if isinstance(zone, str) and "zones" not in m.out.get("placement", {}):
        m.put(("placement", "zones", 0), zone, ("vars", "zone"))


def _nodeset(m: Mapper, module: Loc, index: int, wiring: Wiring) -> str:
    """Map one Slurm nodeset as a node group; returns the group's archform name."""
    base: Loc = ("compute",) if index == 0 else ("compute", "extra_groups", index - 1)
    ident = re.sub(r"[^a-z0-9]", "", str(m.get((*module, "id"), "")).lower())[:16] or "gpu"
    group = DEFAULT_GROUP
    if index:
        group = ident if ident[0].isalpha() else f"g{ident}"[:16]
        m.put((*base, "name"), group, module)
    machine = _setting(m, module, "machine_type")
    if machine is not None:
        m.put((*base, "instance_type"), machine[1], machine[0])
    static = _setting(m, module, "node_count_static")
    dynamic = _setting(m, module, "node_count_dynamic_max")
    count = (static[1] if static else 0) or 0
    if dynamic is not None and dynamic[1]:
        count += dynamic[1]
    where = static[0] if static else dynamic[0] if dynamic else module
    m.put((*base, "nodes"), max(int(count), 1), where)
    spot = _setting(m, module, "enable_spot_vm")
    reservation = _setting(m, module, "reservation_name")
    if spot is not None and spot[1] is True:
        m.put((*base, "purchase"), "spot", spot[0])
    elif reservation is not None and reservation[1]:
        m.put((*base, "purchase"), "reserved", reservation[0])
    zones = _setting(m, module, "zones")
    if index == 0 and zones is not None and isinstance(zones[1], list):
        for z, zone in enumerate(zones[1]):
            m.put(("placement", "zones", z), zone, zones[0])
    placement = _setting(m, module, "enable_placement")
    if index == 0:
        colocation = "none" if placement is not None and placement[1] is False else "cluster"
        m.put(("placement", "colocation"), colocation, placement[0] if placement else module)
        _gpu_networks(m, module, wiring, machine[1] if machine else None)
    done: tuple[str, ...] = ("machine_type", "node_count_static", "node_count_dynamic_max")
    done += ("enable_spot_vm",)
    done += ("reservation_name", "zones", "enable_placement")
    m.rest((*module, "settings"), (*done, *_wired(m, module, wiring)), _reasons(m, module, wiring))
    return group


def _wired(m: Mapper, module: Loc, wiring: Wiring) -> tuple[str, ...]:
    """Settings mapped through their references: the GPU networks of a node group."""
    ident = str(m.get((*module, "id")))
    return ("additional_networks",) if wiring.fed(m, ident, "additional_networks") else ()


def _reasons(m: Mapper, module: Loc, wiring: Wiring) -> dict[str, str]:
    """Why each setting that only references another module's output is not mapped."""
    settings = m.get((*module, "settings"))
    out: dict[str, str] = {}
    for key, value in settings.items() if isinstance(settings, dict) else ():
        refs = sorted({f"{a}.{b}" for a, b in REF.findall(repr(value)) if a != "vars"})
        if refs:
            out[str(key)] = "references " + ", ".join(refs) + "; archform does not check it"
    return out


def _gpu_networks(m: Mapper, module: Loc, wiring: Wiring, machine: Any) -> None:
    """Without the GPU VPCs an A3/A4 machine has only its system NIC for NCCL.

    a3-megagpu-8g needs 8 GPU VPCs for GPUDirect-TCPXO, a3-ultragpu-8g / a4-highgpu-8g an
    RDMA VPC (the catalog's gpu_vpcs / rdma_subnets); Cluster Toolkit attaches them through
    `additional_networks` (from a multivpc or gpu-rdma-vpc module in `use:`).
    """
    info = load_catalog().instance(str(machine)) if machine is not None else None
    if info is None or not (info.gpu_vpcs or info.rdma_subnets):
        return
    ident = str(m.get((*module, "id")))
    if m.has((*module, "settings", "additional_networks")) or wiring.fed(
        m, ident, "additional_networks"
    ):
        return
    at: Loc = (*module, "use") if m.has((*module, "use")) else (*module, "id")
    need = f"{info.gpu_vpcs} GPU VPCs" if not info.rdma_subnets else "an RDMA VPC"
    why = (
        f"no additional_networks: the nodes get only the system NIC; {machine} needs {need} "
        "(a multivpc or gpu-rdma-vpc module in use:) for its GPU fabric"
    )
    m.put(("fabric", "kind"), "ethernet", at, why=why)
    m.put(("fabric", "gbps_per_node"), int(info.ethernet_gbps), at, why=why)


def _partition(
    m: Mapper, module: Loc, index: int, nodesets: dict[str, str], wiring: Wiring
) -> None:
    base: Loc = ("scheduler", "partitions", index)
    name = _setting(m, module, "partition_name")
    m.put((*base, "name"), str(name[1]) if name else f"p{index}", name[0] if name else module)
    default = _setting(m, module, "is_default")
    if default is not None:
        m.put((*base, "default"), bool(default[1]), default[0])
    exclusive = _setting(m, module, "exclusive")
    if exclusive is not None:
        m.put((*base, "exclusive"), bool(exclusive[1]), exclusive[0])
    fed = wiring.fed(m, str(m.get((*module, "id"))), "nodeset")
    held = [nodesets[f] for f in fed if f in nodesets]
    mapped: tuple[str, ...] = ("partition_name", "is_default", "exclusive")
    where: Loc = (*module, "settings", "nodeset")
    if m.has(where):
        mapped += ("nodeset",)
    else:
        where = (*module, "use")
    if not held:
        m.unmapped(where, "the partition holds no nodeset read here")
    elif set(held) != set(nodesets.values()):
        for g, group in enumerate(dict.fromkeys(held)):
            m.put((*base, "groups", g), group, where, why="the nodesets it holds")
    m.rest((*module, "settings"), mapped, _reasons(m, module, wiring))


def _storage(m: Mapper, module: Loc, index: int, lustre: bool) -> None:
    base: Loc = ("storage", index)
    ident = re.sub(r"[^a-z0-9-]", "-", str(m.get((*module, "id"), "")).lower())[:39]
    m.put((*base, "name"), ident if ident[:1].isalpha() else f"fs-{ident}"[:39], module)
    m.put((*base, "kind"), "lustre" if lustre else "nfs", (*module, "source"))
    mount = _setting(m, module, "local_mount")
    path = str(mount[1]) if mount else ""
    purpose = "training_data"
    if path == "/home":
        purpose = "home"
    elif "ckpt" in path or "checkpoint" in path:
        purpose = "checkpoints"
    m.put((*base, "purpose"), purpose, mount[0] if mount else module, why="from the mount path")
    if mount is not None:
        m.put((*base, "mount"), path, mount[0])
    size = _setting(m, module, "size_gib" if lustre else "size_gb")
    gib = size[1] if size else (36000 if lustre else 2560)
    m.put(
        (*base, "capacity_tib"),
        round(gib / GIB_PER_TIB, 2),
        size[0] if size else module,
        why="GiB -> TiB" if size else "the module's default size",
    )
    if lustre:
        tput = _setting(m, module, "per_unit_storage_throughput")
        m.put(
            (*base, "throughput_mbps_per_tib"),
            int(tput[1]) if tput else 500,
            tput[0] if tput else module,
        )
        bucket = _setting(m, module, "import_gcs_bucket_uri")
        if bucket is not None:
            m.put((*base, "source"), str(bucket[1]).rstrip("/") + "/", bucket[0])
    else:
        tier = _setting(m, module, "filestore_tier")
        if tier is not None:
            m.put((*base, "filestore_tier"), tier[1], tier[0])
    done = ("local_mount", "size_gib", "size_gb", "per_unit_storage_throughput")
    m.rest((*module, "settings"), (*done, "import_gcs_bucket_uri", "filestore_tier"))


def _gke_pool(m: Mapper, module: Loc, index: int, wiring: Wiring) -> None:
    """A GKE node pool (modules/compute/gke-node-pool) as a Kubernetes node group."""
    if index:
        m.unmapped(module, "a second GPU node pool; archform lints the first")
        return
    m.put(("scheduler", "kind"), "kubernetes", (*module, "source"))
    machine = _setting(m, module, "machine_type")
    if machine is not None:
        m.put(("compute", "instance_type"), machine[1], machine[0])
    count = None
    for key in ("static_node_count", "autoscaling_total_max_nodes"):
        count = count or _setting(m, module, key)
    m.put(("compute", "nodes"), int(count[1]) if count else 1, count[0] if count else module)
    spot = _setting(m, module, "spot")
    if spot is not None and spot[1] is True:
        m.put(("compute", "purchase"), "spot", spot[0])
    zones = _setting(m, module, "zones")
    if zones is not None and isinstance(zones[1], list):
        for z, zone in enumerate(zones[1]):
            m.put(("placement", "zones", z), zone, zones[0])
    policy = _setting(m, module, "placement_policy")
    compact = policy is not None and isinstance(policy[1], dict)
    compact = compact and str(policy[1].get("type", "")).upper() == "COMPACT"  # type: ignore[index]
    where = policy[0] if policy is not None else module
    m.put(("placement", "colocation"), "cluster" if compact else "none", where)
    _gpu_networks(m, module, wiring, machine[1] if machine else None)
    done: tuple[str, ...] = ("machine_type", "static_node_count", "autoscaling_total_max_nodes")
    done += ("spot",)
    done += ("zones", "placement_policy", *_wired(m, module, wiring))
    m.rest((*module, "settings"), done, _reasons(m, module, wiring))
