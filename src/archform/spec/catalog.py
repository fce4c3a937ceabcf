"""The hardware catalog: GPU models and cloud instance types, as data (data/catalog.yaml)."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True, slots=True)
class GpuInfo:
    """Facts about one GPU model."""

    name: str
    memory_gib: float
    bf16_dense_tflops: float
    tdp_w: int
    nvswitch: bool
    aliases: tuple[str, ...]
    source: str


@dataclass(frozen=True, slots=True)
class InstanceInfo:
    """Facts about one cloud instance type."""

    name: str
    provider: str
    generation: str
    kind: str
    gpu_model: str | None
    gpu_count: int
    vcpus: int
    memory_gib: float
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    fabric_kind: str
    fabric_gbps: int
    fabric_interfaces: int
    ethernet_gbps: float
    local_nvme_gib: float
    source: str

    @property
    def is_gpu(self) -> bool:
        """True for GPU instance types."""
        return self.kind == "gpu"


class Catalog:
    """Lookup over the catalog data with did-you-mean suggestions."""

    def __init__(self, gpus: dict[str, GpuInfo], instances: dict[str, InstanceInfo]) -> None:
        self.gpus = gpus
        self.instances = instances
        self._gpu_alias = {
            alias.lower(): g for g in gpus.values() for alias in (g.name, *g.aliases)
        }

    def instance(self, name: str) -> InstanceInfo | None:
        """The instance type, or None when unknown."""
        return self.instances.get(name)

    def gpu(self, model: str) -> GpuInfo | None:
        """A GPU by name or alias, case-insensitive."""
        return self._gpu_alias.get(model.lower())

    def suggest_instance(self, name: str, provider: str | None = None) -> list[str]:
        """Close matches among known instance types (of the provider, when given)."""
        pool = [n for n, i in self.instances.items() if provider in (None, i.provider)]
        return difflib.get_close_matches(name, pool, n=3, cutoff=0.6)

    def suggest_gpu(self, model: str) -> list[str]:
        """Close matches among known GPU models."""
        return difflib.get_close_matches(model, list(self.gpus), n=3, cutoff=0.5)


def _gpu(name: str, raw: dict[str, Any]) -> GpuInfo:
    return GpuInfo(
        name=name,
        memory_gib=float(raw["memory_gib"]),
        bf16_dense_tflops=float(raw["bf16_dense_tflops"]),
        tdp_w=int(raw["tdp_w"]),
        nvswitch=bool(raw["nvswitch"]),
        aliases=tuple(str(a) for a in raw.get("aliases") or ()),
        source=str(raw.get("source", "")),
    )


def _instance(name: str, raw: dict[str, Any]) -> InstanceInfo:
    gpu = raw.get("gpu") or {}
    cpu = raw["cpu"]
    fabric = raw.get("fabric") or {"kind": "ethernet", "gbps": 0, "interfaces": 0}
    return InstanceInfo(
        name=name,
        provider=str(raw["provider"]),
        generation=str(raw["generation"]),
        kind=str(raw["kind"]),
        gpu_model=str(gpu["model"]) if gpu else None,
        gpu_count=int(gpu.get("count", 0)),
        vcpus=int(raw["vcpus"]),
        memory_gib=float(raw["memory_gib"]),
        sockets=int(cpu["sockets"]),
        cores_per_socket=int(cpu["cores_per_socket"]),
        threads_per_core=int(cpu["threads_per_core"]),
        fabric_kind=str(fabric["kind"]),
        fabric_gbps=int(fabric.get("gbps", 0)),
        fabric_interfaces=int(fabric.get("interfaces", 0)),
        ethernet_gbps=float(raw.get("ethernet_gbps", 0)),
        local_nvme_gib=float(raw.get("local_nvme_gib", 0)),
        source=str(raw.get("source", "")),
    )


def catalog_data() -> dict[str, Any]:
    """The raw catalog from its JSON twin (generated from catalog.yaml by scripts/)."""
    text = resources.files("archform.spec").joinpath("data/catalog.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def load_catalog() -> Catalog:
    """Load (once) the catalog shipped in archform/spec/data/catalog.yaml (via its JSON twin)."""
    data = catalog_data()
    gpus = {name: _gpu(name, raw) for name, raw in sorted(data["gpus"].items())}
    instances = {name: _instance(name, raw) for name, raw in sorted(data["instances"].items())}
    return Catalog(gpus, instances)
