"""Fill `gpu`, `cpu`, `memory_gib`, `fabric`, storage sizes, health checks and server images.

Runs on plain data before validation, so the resolved blueprint shows every default.
A GPU model or count that disagrees with the instance type is an error here; a declared
fabric that differs from the instance's is kept as written and judged by the linter.
"""

from __future__ import annotations

import math
from typing import Any

from archform.spec.catalog import Catalog, InstanceInfo, load_catalog
from archform.spec.engines import DEFAULT_KIND, engine, kinds
from archform.spec.errors import SpecProblem
from archform.spec.filestore import filestore
from archform.spec.paths import Loc, format_path
from archform.spec.provider import names, spec_of, spec_or_none
from archform.spec.source import RawDocument


def fill_defaults(doc: RawDocument) -> list[SpecProblem]:
    """Mutate `doc.data` in place with catalog defaults; return problems found."""
    data = doc.data
    if not isinstance(data, dict):
        return []
    catalog = load_catalog()
    problems: list[SpecProblem] = []
    kind = data.get("kind")
    provider = _get(data, "placement", "provider")
    if kind == "TrainingCluster":
        compute = data.get("compute")
        if isinstance(compute, dict):
            info = _fill_group(doc, catalog, compute, ("compute",), provider, problems)
            extras = compute.get("extra_groups")
            if isinstance(extras, list):
                for i, group in enumerate(extras):
                    if isinstance(group, dict):
                        loc = ("compute", "extra_groups", i)
                        _fill_group(doc, catalog, group, loc, provider, problems)
            if info is not None:
                _fill_fabric(data, info)
        _fill_lustre_capacity(catalog, data.get("storage"), provider)
        _fill_filestore_tier(data.get("storage"), provider)
        _fill_health_checks(data)
        _fill_local_nvme(doc, catalog, data, problems)
    elif kind == "InferenceFleet":
        pool = data.get("gpu_pool")
        if isinstance(pool, dict):
            _fill_group(
                doc, catalog, pool, ("gpu_pool",), provider, problems, cpu=False, needs_gpu=True
            )
        server = data.get("server")
        if isinstance(server, dict) and "image" not in server:
            kind = server.get("kind", DEFAULT_KIND)
            image = engine(kind).image if isinstance(kind, str) and kind in kinds() else None
            if image is not None:
                server["image"] = image
    return problems


CATALOG_FILLS = ("gpu", "cpu", "memory_gib")
"""Keys of a node group the catalog fills from its instance type (and `fabric` from compute's)."""


def cascades(filled: list[SpecProblem], found: list[SpecProblem]) -> list[SpecProblem]:
    """`found` without the missing keys the catalog would have filled for a type it reported.

    When the catalog reports an unknown instance type, the keys it fills from that type are
    missing too, and the model says so ("missing required key 'fabric'"); those are the same
    mistake, so only the unknown type is reported.
    """
    groups = {
        p.path.removesuffix(".instance_type") for p in filled if p.path.endswith("instance_type")
    }
    implied = {f"{g}.{key}" for g in groups for key in CATALOG_FILLS}
    if "compute" in groups:
        implied.add("fabric")
    return [p for p in found if not (p.path in implied and "missing required key" in p.message)]


def _fill_lustre_capacity(catalog: Catalog, storage: Any, provider: Any) -> None:
    """A cloud Lustre entry without capacity_tib gets the service's minimum for its tier."""
    service = catalog.lustre.get(provider) if isinstance(provider, str) else None
    if service is None or not isinstance(storage, list):
        return
    for entry in storage:
        if not isinstance(entry, dict) or entry.get("kind") != "lustre":
            continue
        if "capacity_tib" in entry:
            continue
        tier = entry.get("throughput_mbps_per_tib")
        rule = (service.tier(tier) if isinstance(tier, int) else None) or service.tier(
            service.default_tier
        )
        if rule is not None:
            entry["capacity_tib"] = rule.min_gib / 1024


# Slurm health checks a GPU cluster gets unless the blueprint lists its own: NHC as slurmd's
# HealthCheckProgram and the DCGM prolog/epilog. The same on every provider: the roles install
# NHC from its release tarball and DCGM from NVIDIA's repository wherever the node image lacks
# them (roles/health, roles/nvidia_driver), and both run only on nodes that have GPUs.
GPU_HEALTH_CHECKS = ("nhc", "dcgm")


def _fill_health_checks(data: dict[str, Any]) -> None:
    """A Slurm cluster with GPUs and no `scheduler.health_checks` gets [nhc, dcgm]."""
    scheduler = data.get("scheduler", {})
    if not isinstance(scheduler, dict) or "health_checks" in scheduler:
        return
    if scheduler.get("kind", "slurm") != "slurm" or not _has_gpus(data.get("compute")):
        return
    scheduler["health_checks"] = list(GPU_HEALTH_CHECKS)
    data["scheduler"] = scheduler


def _has_gpus(compute: Any) -> bool:
    if not isinstance(compute, dict):
        return False
    extras = compute.get("extra_groups")
    groups = [compute, *(extras if isinstance(extras, list) else [])]
    return any(
        isinstance(g, dict)
        and isinstance(g.get("gpu"), dict)
        and isinstance(g["gpu"].get("per_node"), int)
        and g["gpu"]["per_node"] > 0
        for g in groups
    )


def _fill_local_nvme(
    doc: RawDocument, catalog: Catalog, data: dict[str, Any], problems: list[SpecProblem]
) -> None:
    """A `local_nvme` entry gets the nodes' local NVMe size and may not ask for more.

    The size is the smallest over the GPU node groups whose instance type the catalog knows
    (local NVMe is per node; CPU groups such as a debug partition are left out unless the
    cluster has no GPU group); no local NVMe there is an error at the entry's kind.
    """
    storage = data.get("storage")
    compute = data.get("compute")
    if not isinstance(storage, list) or not isinstance(compute, dict):
        return
    extras = compute.get("extra_groups")
    groups = [
        g for g in (compute, *(extras if isinstance(extras, list) else [])) if isinstance(g, dict)
    ]
    groups = [g for g in groups if isinstance(g.get("gpu"), dict)] or groups
    infos = [
        info
        for g in groups
        if isinstance(g, dict)
        and isinstance(g.get("instance_type"), str)
        and (info := catalog.instance(g["instance_type"])) is not None
    ]
    if not infos:
        return  # on-prem or unknown types: capacity_tib must be written (Storage._sized)
    smallest = min(infos, key=lambda i: i.local_nvme_tib)
    tib = math.floor(smallest.local_nvme_tib * 1000) / 1000
    for i, entry in enumerate(storage):
        if not isinstance(entry, dict) or entry.get("kind") != "local_nvme":
            continue
        if tib <= 0:
            with_nvme = sorted(n.name for n in infos if n.local_nvme_tib > 0)
            problems.append(
                _problem(
                    doc,
                    ("storage", i, "kind"),
                    f"{smallest.name} has no local NVMe (archform's catalog: 0 GiB)",
                    "remove this entry, or choose an instance type with local NVMe"
                    + (f" (as {', '.join(with_nvme)})" if with_nvme else ""),
                )
            )
            continue
        size = entry.get("capacity_tib")
        if size is None:
            entry["capacity_tib"] = tib
        elif (
            isinstance(size, int | float)
            and not isinstance(size, bool)
            and size > smallest.local_nvme_tib + 1e-9
        ):
            problems.append(
                _problem(
                    doc,
                    ("storage", i, "capacity_tib"),
                    f"capacity_tib {size} is more than the {tib} TiB of local NVMe of "
                    f"{smallest.name} (archform's catalog: {smallest.local_nvme_gib:g} "
                    f"{'GiB' if _nvme_unit(smallest.provider) == 2**30 else 'GB'})",
                    f"remove capacity_tib to use all of it, or give at most {tib}",
                )
            )


def _nvme_unit(provider: str) -> int:
    spec = spec_or_none(provider)
    return 2**30 if spec is None else spec.nvme_unit_bytes


def _small_gpu_examples() -> str:
    """`g6.xlarge (aws), ... or ...`: each cloud's example small GPU type."""
    given = [(spec_of(n).example_small_gpu, n) for n in names()]
    shown = [f"{t} ({n})" for t, n in given if t]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def _fill_filestore_tier(storage: Any, provider: Any) -> None:
    """A GCP nfs entry (a Filestore instance) without filestore_tier gets the default tier."""
    spec = spec_or_none(provider)
    if spec is None or not spec.filestore or not isinstance(storage, list):
        return
    for entry in storage:
        if isinstance(entry, dict) and entry.get("kind") == "nfs":
            entry.setdefault("filestore_tier", filestore().default)


def _get(data: dict[str, Any], *keys: str) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _problem(
    doc: RawDocument, loc: Loc, message: str, hint: str, prefer: str = "value"
) -> SpecProblem:
    pos = doc.source.locate(loc, prefer=prefer)
    return SpecProblem(doc.file, pos.line, pos.column, message, hint, format_path(loc))


def _fill_group(
    doc: RawDocument,
    catalog: Catalog,
    group: dict[str, Any],
    loc: Loc,
    provider: Any,
    problems: list[SpecProblem],
    *,
    cpu: bool = True,
    needs_gpu: bool = False,
) -> InstanceInfo | None:
    itype = group.get("instance_type")
    gpu = group.get("gpu")
    if gpu is not None and not isinstance(gpu, dict):
        return None
    if isinstance(gpu, dict) and isinstance(gpu.get("model"), str):
        known = catalog.gpu(gpu["model"])
        if known is not None:
            gpu["model"] = known.name
            gpu.setdefault("memory_gib", known.memory_gib)
        elif "memory_gib" not in gpu:
            hint = _did_you_mean(catalog.suggest_gpu(gpu["model"]))
            problems.append(
                _problem(
                    doc,
                    (*loc, "gpu", "model"),
                    f"GPU model {gpu['model']!r} is not in archform's catalog",
                    (hint + "; or " if hint else "")
                    + "give `memory_gib:` beside it to use a GPU the catalog does not know",
                )
            )
    if not isinstance(itype, str):
        return None
    info = catalog.instance(itype)
    partial = catalog.partial_gpu(itype) if info is None else None
    if partial is not None:
        problems.append(
            _problem(
                doc,
                (*loc, "instance_type"),
                f"{itype} has {partial.fraction} of an {partial.gpu} "
                f"({partial.gpu_memory_gib:g} GiB of GPU memory), a vGPU partition; archform "
                "sizes whole GPUs (memory fit, tensor parallelism, one nvidia.com/gpu each)",
                f"use {partial.whole} (one whole {partial.gpu}) or a larger size; "
                f"source: {partial.source}",
            )
        )
        return None
    if info is None:
        suggestions = catalog.suggest_instance(
            itype, provider if isinstance(provider, str) else None
        )
        gpu_like = catalog.gpu_like(itype) or any(
            (s := catalog.instance(name)) is not None and s.is_gpu for name in suggestions
        )
        if gpu_like and gpu is None:
            hint = _did_you_mean(suggestions)
            problems.append(
                _problem(
                    doc,
                    (*loc, "instance_type"),
                    f"GPU instance type {itype!r} is not in archform's catalog",
                    (hint + "; or " if hint else "")
                    + "give `gpu: {model, per_node}` to use a type the catalog does not know",
                )
            )
        return None
    spec = spec_or_none(provider)
    if spec is not None and spec.cloud and info.provider != provider:
        problems.append(
            _problem(
                doc,
                (*loc, "instance_type"),
                f"{itype} is an instance type of {info.provider}, "
                f"but placement.provider is {provider}",
                "pick an instance type of the provider, or fix placement.provider",
            )
        )
    if needs_gpu and not info.is_gpu:
        # pods would request nvidia.com/gpu on nodes that have none and stay Pending forever
        problems.append(
            _problem(
                doc,
                (*loc, "instance_type"),
                f"{itype} is a CPU instance type ({info.vcpus} vCPUs, no GPUs); "
                "a gpu_pool needs GPU nodes",
                f"choose a GPU instance type of the provider, e.g. {_small_gpu_examples()}",
            )
        )
        return info
    if info.is_gpu:
        _check_gpu(doc, catalog, info, group, loc, problems)
    elif isinstance(gpu, dict):
        problems.append(
            _problem(
                doc,
                (*loc, "gpu"),
                f"{itype} has no GPUs but the blueprint declares `gpu:`",
                "choose a GPU instance type, or remove `gpu:`",
                prefer="key",
            )
        )
    if cpu:
        group.setdefault(
            "cpu",
            {
                "sockets": info.sockets,
                "cores_per_socket": info.cores_per_socket,
                "threads_per_core": info.threads_per_core,
            },
        )
        group.setdefault("memory_gib", int(info.memory_gib))
    return info


def _check_gpu(
    doc: RawDocument,
    catalog: Catalog,
    info: InstanceInfo,
    group: dict[str, Any],
    loc: Loc,
    problems: list[SpecProblem],
) -> None:
    assert info.gpu_model is not None
    gpu_info = catalog.gpu(info.gpu_model)
    declared = group.get("gpu")
    if declared is None:
        group["gpu"] = {
            "model": info.gpu_model,
            "per_node": info.gpu_count,
            "memory_gib": gpu_info.memory_gib if gpu_info else None,
        }
        return
    model = declared.get("model")
    if isinstance(model, str) and model != info.gpu_model:
        problems.append(
            _problem(
                doc,
                (*loc, "gpu", "model"),
                f"{info.name} has {info.gpu_model} GPUs, the blueprint says {model}",
                "remove `gpu:` to take it from the catalog, or fix instance_type",
            )
        )
    count = declared.get("per_node")
    if isinstance(count, int) and not isinstance(count, bool) and count != info.gpu_count:
        problems.append(
            _problem(
                doc,
                (*loc, "gpu", "per_node"),
                f"{info.name} has {info.gpu_count} GPUs per node, the blueprint says {count}",
                "remove `gpu:` to take it from the catalog, or fix instance_type",
            )
        )
    declared.setdefault("model", info.gpu_model)
    declared.setdefault("per_node", info.gpu_count)
    if gpu_info is not None:
        declared.setdefault("memory_gib", gpu_info.memory_gib)


def _fill_fabric(data: dict[str, Any], info: InstanceInfo) -> None:
    fabric = data.get("fabric")
    if fabric is None:
        fabric = {}
        data["fabric"] = fabric
    if not isinstance(fabric, dict):
        return
    kind = info.fabric_kind
    gbps = info.fabric_gbps if kind != "ethernet" else int(info.ethernet_gbps)
    rails = info.fabric_interfaces
    if info.gpu_count and rails:
        rails = min(rails, info.gpu_count)
    fabric.setdefault("kind", kind)
    if fabric["kind"] == kind:
        fabric.setdefault("gbps_per_node", gbps)
        fabric.setdefault("rails", max(rails, 1))


def _did_you_mean(options: list[str]) -> str:
    if not options:
        return ""
    return "did you mean " + " or ".join(repr(o) for o in options) + "?"
