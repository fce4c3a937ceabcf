"""Deploy-time waits and transfer budgets (spec/data/deploy_timing.yaml), with their sources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from archform.spec.datafile import load_data


@dataclass(frozen=True, slots=True)
class DeployTiming:
    """The numbers of deploy_timing.yaml (seconds, MB/s)."""

    default_await_s: int
    node_provision_s: int
    object_store_mb_per_s: float
    image_pull_s: int
    # Seconds a grant needs before it is honoured, by the table's key (`<what>_s`; each
    # with its `<what>_source`): the provider's fleet program reads its own.
    propagation: Mapping[str, int]
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
        propagation=MappingProxyType({k: int(v) for k, v in prop.items() if k.endswith("_s")}),
        await_source=str(k8s["source"]).split()[0],
        service_await_source=str(k8s["service_source"]).split()[0],
    )
