"""Deploy-time waits and transfer budgets (spec/data/deploy_timing.yaml), with their sources."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data


@dataclass(frozen=True, slots=True)
class DeployTiming:
    """The numbers of deploy_timing.yaml (seconds, MB/s)."""

    default_await_s: int
    node_provision_s: int
    object_store_mb_per_s: float
    image_pull_s: int
    aks_rbac_s: int
    azure_role_s: int
    eks_pod_identity_s: int
    await_source: str
    service_await_source: str


@cache
def deploy_timing() -> DeployTiming:
    """The bundled table."""
    data: dict[str, Any] = load_data("deploy_timing.yaml")
    k8s, node, transfer, prop = (
        data["pulumi_kubernetes"],
        data["node"],
        data["transfer"],
        data["propagation"],
    )
    return DeployTiming(
        default_await_s=int(k8s["default_await_s"]),
        node_provision_s=int(node["max_provision_s"]),
        object_store_mb_per_s=float(transfer["object_store_mb_per_s"]),
        image_pull_s=int(transfer["image_pull_s"]),
        aks_rbac_s=int(prop["aks_rbac_s"]),
        azure_role_s=int(prop["azure_role_s"]),
        eks_pod_identity_s=int(prop["eks_pod_identity_s"]),
        await_source=str(k8s["source"]).split()[0],
        service_await_source=str(k8s["service_source"]).split()[0],
    )
