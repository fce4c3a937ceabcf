"""The inference-fleet view-model: plain, sorted data every fleet output is built from.

Names, pool sizes, replica bounds and the per-region weight location are decided here
once, so the Pulumi program, the Kubernetes manifests and the smoke playbook agree.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import re
from typing import Any

from archform.estimate.inference import weights_gib
from archform.spec.catalog import load_catalog
from archform.spec.errors import UsageError
from archform.spec.models.inference import InferenceFleet

GPU_POOL_LABEL = "archform.io/pool"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}

# GKE accelerator type per machine family (https://cloud.google.com/compute/docs/gpus).
_GKE_ACCELERATOR = (
    ("a3-megagpu", "nvidia-h100-mega-80gb"),
    ("a3-ultragpu", "nvidia-h200-141gb"),
    ("a3-highgpu", "nvidia-h100-80gb"),
    ("a4-highgpu", "nvidia-b200"),
    ("a2-ultragpu", "nvidia-a100-80gb"),
    ("a2-highgpu", "nvidia-tesla-a100"),
    ("g2-", "nvidia-l4"),
    ("n1-", "nvidia-tesla-t4"),
)


def gke_accelerator(instance_type: str) -> str:
    """The GKE `guest_accelerators.type` for a GPU machine type."""
    for prefix, accel in _GKE_ACCELERATOR:
        if instance_type.startswith(prefix):
            return accel
    raise ValueError(f"no GKE accelerator type known for machine type {instance_type!r}")


def _all_private(cidrs: list[str]) -> bool:
    return all(ipaddress.ip_network(c).is_private for c in cidrs)


def replica_uri(fleet: InferenceFleet, region: str) -> str:
    """Where pods in `region` read the weights: the source, or its in-region replica."""
    source = fleet.model.source
    source_region = fleet.model.source_region or fleet.placement.all_regions[0]
    if region == source_region or not fleet.model.replicate_to_regions:
        return source
    provider = fleet.placement.provider
    bucket = replica_bucket(fleet, region)
    path = f"models/{fleet.model.name}/"
    if provider == "aws":
        return f"s3://{bucket}/{path}"
    if provider == "gcp":
        return f"gs://{bucket}/{path}"
    return f"https://{bucket}.blob.core.windows.net/models/{fleet.model.name}/"


def replica_bucket(fleet: InferenceFleet, region: str) -> str:
    """Name of the per-region replica bucket (Azure: storage account, 3-24 lowercase alnum)."""
    # Bucket and storage-account names are global across all customers: a stable hash of
    # fleet and region makes a clash with someone else's bucket unlikely.
    digest = hashlib.sha256(f"{fleet.name}/{region}".encode()).hexdigest()[:6]
    if fleet.placement.provider == "azure":
        # 8 of the fleet + 10 of the region + the hash: 3-24 lowercase letters and digits.
        name, where = (re.sub(r"[^a-z0-9]", "", x) for x in (fleet.name, region))
        return f"{name[:8]}{where[:10]}{digest}"
    return f"{fleet.name[:30]}-{region}-{digest}"


def _bucket_of(uri: str) -> str:
    """Bucket (s3/gs) or storage account (Azure blob URL) of a weights URI."""
    scheme, _, rest = uri.partition("://")
    host = rest.split("/", 1)[0]
    return host.split(".", 1)[0] if scheme == "https" else host


def pool_suffix(instance_type: str) -> str:
    """Four hex digits of the GPU instance type, appended to every GPU pool name.

    A pool's instance type cannot change in place (EKS node groups, GKE node pools and AKS
    agent pools are replaced), and a replacement under the same name either collides with
    the pool it replaces or must delete all GPU capacity first. With the type in the name,
    a type change is a new pool beside the old one: Pulumi creates it, then deletes the old
    pool, whose nodes the provider drains.
    """
    return hashlib.sha256(instance_type.encode("utf-8")).hexdigest()[:4]


def _pools(fleet: InferenceFleet, per_node: int) -> list[dict[str, Any]]:
    pool = fleet.gpu_pool
    spot = pool.purchase == "spot"
    floor = min(pool.on_demand_floor_per_region, pool.max_nodes_per_region) if spot else 0
    sfx = pool_suffix(pool.instance_type)  # AKS: <= 12 lowercase alphanumerics
    pools: list[dict[str, Any]] = []
    if floor:
        pools.append(
            {"name": f"gpuod{sfx}", "spot": False, "min": floor, "max": floor, "gpus": per_node}
        )
    if not spot or pool.max_nodes_per_region > floor:
        pools.append(
            {
                "name": f"gpuspot{sfx}" if spot else f"gpu{sfx}",
                "spot": spot,
                "min": max(0, pool.min_nodes_per_region - floor),
                "max": pool.max_nodes_per_region - floor,
                "gpus": per_node,
            }
        )
    return pools


def fleet_view(fleet: InferenceFleet) -> dict[str, Any]:
    """Everything the fleet templates need, as plain values."""
    catalog = load_catalog()
    gpu = fleet.gpu_pool.gpu
    per_node = gpu.per_node if gpu else 1
    tp = fleet.server.tensor_parallel
    if tp > per_node:
        raise UsageError(
            f"{fleet.name}: server.tensor_parallel {tp} exceeds the {per_node} GPUs of one "
            f"{fleet.gpu_pool.instance_type} node; multi-node replicas are not generated",
            "lower tensor_parallel or choose an instance type with more GPUs",
        )
    replicas_per_node = per_node // tp
    gpu_info = catalog.instance(fleet.gpu_pool.instance_type)
    share = tp / per_node
    vcpus = gpu_info.vcpus if gpu_info else 8
    mem = gpu_info.memory_gib if gpu_info else 32.0
    cidrs = list(fleet.kubernetes.api_access_cidrs)
    private_api = _all_private(cidrs)
    weights = weights_gib(fleet.model.params, fleet.model.precision)
    regions = []
    for i, region in enumerate(fleet.placement.all_regions):
        regions.append(
            {
                "name": region,
                "index": i,
                "key": re.sub(r"[^a-z0-9]", "", region),
                "cluster": f"{fleet.name}-{region}"[:40].rstrip("-"),
                "vpc_cidr": f"10.{100 + i}.0.0/16",
                "weights_uri": replica_uri(fleet, region),
                "weights_bucket": _bucket_of(replica_uri(fleet, region)),
                "replica_bucket": replica_bucket(fleet, region)
                if replica_uri(fleet, region) != fleet.model.source
                else None,
            }
        )
    autoscaling = fleet.autoscaling
    return {
        "name": fleet.name,
        "provider": fleet.placement.provider,
        "k8s_version": fleet.kubernetes.version,
        "validate_version": f"{fleet.kubernetes.version}.0",
        "api_cidrs": cidrs,
        "api_private": private_api,
        "api_public_cidrs": []
        if private_api
        else [c for c in cidrs if not ipaddress.ip_network(c).is_private],
        "regions": regions,
        "global_lb": bool(fleet.traffic and fleet.traffic.global_load_balancer),
        "model": {
            "name": fleet.model.name,
            "source": fleet.model.source,
            "source_region": fleet.model.source_region or fleet.placement.all_regions[0],
            "max_context": fleet.model.max_context_tokens,
            "weights_gib": round(weights, 2),
            "cache_gib": math.ceil(weights * 1.2) + 2,
        },
        "server": {
            "kind": fleet.server.kind,
            "image": fleet.server.image,
            "tp": tp,
            "port": fleet.server.port,
            "load_time_seconds": fleet.server.load_time_seconds,
        },
        "gpu_pools": _pools(fleet, per_node),
        "gpu_instance": fleet.gpu_pool.instance_type,
        "gpu_model": gpu.model if gpu else "unknown",
        "gpus_per_node": per_node,
        "accelerator": gke_accelerator(fleet.gpu_pool.instance_type)
        if fleet.placement.provider == "gcp"
        else None,
        "pod_cpu": max(1, int(vcpus * share * 0.8)),
        "pod_memory_gib": max(4, int(mem * share * 0.8)),
        "system_pool": {
            "instance": fleet.system_pool.instance_type
            if fleet.system_pool
            else _default_system(fleet.placement.provider),
            "nodes": fleet.system_pool.nodes_per_region if fleet.system_pool else 2,
        },
        "replicas": {
            "min": max(1, fleet.gpu_pool.min_nodes_per_region * replicas_per_node),
            "max": fleet.gpu_pool.max_nodes_per_region * replicas_per_node,
        },
        "autoscaling": {
            "metric": autoscaling.metric if autoscaling else "queue_depth",
            "target": autoscaling.target if autoscaling else 8.0,
        },
        "spot": fleet.gpu_pool.purchase == "spot",
    }


def _default_system(provider: str) -> str:
    return {"aws": "m6i.xlarge", "gcp": "n2-standard-8", "azure": "Standard_D8s_v5"}[provider]
