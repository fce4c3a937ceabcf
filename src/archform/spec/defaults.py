"""Fill `gpu`, `cpu`, `memory_gib`, `fabric`, Lustre capacity and server image defaults.

Runs on plain data before validation, so the resolved blueprint shows every default.
A GPU model or count that disagrees with the instance type is an error here; a declared
fabric that differs from the instance's is kept as written and judged by the linter.
"""

from __future__ import annotations

from typing import Any

from archform.spec.catalog import Catalog, InstanceInfo, load_catalog
from archform.spec.errors import SpecProblem
from archform.spec.paths import Loc, format_path
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
    elif kind == "InferenceFleet":
        pool = data.get("gpu_pool")
        if isinstance(pool, dict):
            _fill_group(doc, catalog, pool, ("gpu_pool",), provider, problems, cpu=False)
        server = data.get("server")
        if isinstance(server, dict) and "image" not in server:
            image = catalog.server_images.get(str(server.get("kind", "vllm")))
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
    if provider in ("aws", "gcp", "azure") and info.provider != provider:
        problems.append(
            _problem(
                doc,
                (*loc, "instance_type"),
                f"{itype} is an instance type of {info.provider}, "
                f"but placement.provider is {provider}",
                "pick an instance type of the provider, or fix placement.provider",
            )
        )
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
