"""nccl-tests bus-bandwidth floors as data (data/nccl_floors.yaml), and choosing them per cluster.

Each floor is a published figure (a measurement quoted with its source URL) times the data
file's documented fraction. `node_floors` picks the single-node (NVLink/NVSwitch) floors for a
GPU model; `fabric_floors` the two-node and cluster-wide floors for a fabric and link rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ruamel.yaml import YAML

STAGES = ("pair", "cluster")


@dataclass(frozen=True, slots=True)
class Floor:
    """One all_reduce_perf busbw floor: the NCCL_ALGO it is run with and its source."""

    algorithm: str | None  # NCCL_ALGO value; None = NCCL's default choice
    published_gbytes: float
    fraction: float
    measured: str
    source: str

    @property
    def floor_gbytes(self) -> float:
        """The floor: the published figure times the fraction, in GB/s."""
        return round(self.published_gbytes * self.fraction, 1)


@dataclass(frozen=True, slots=True)
class NodeFloor:
    """A single-node (NVLink/NVSwitch) floor for one GPU model."""

    gpu: str
    floor: Floor


@dataclass(frozen=True, slots=True)
class FabricFloor:
    """A two-node or cluster-wide floor for one fabric kind and link rate."""

    fabric: str
    rate_gbps: int
    per: str  # "rail" or "node"
    scope: tuple[str, ...]
    floor: Floor


@dataclass(frozen=True, slots=True)
class FloorTable:
    """The whole data file."""

    fraction: float
    node: tuple[NodeFloor, ...]
    fabric: tuple[FabricFloor, ...]


def floors_data() -> dict[str, Any]:
    """The raw table from archform/spec/data/nccl_floors.yaml."""
    text = resources.files("archform.spec").joinpath("data/nccl_floors.yaml").read_text("utf-8")
    data: dict[str, Any] = YAML(typ="safe", pure=True).load(text)
    return data


def _floor(raw: dict[str, Any], fraction: float) -> Floor:
    source = str(raw.get("source") or "")
    if not source.startswith("https://"):
        raise ValueError(f"nccl_floors.yaml: entry {raw!r} has no public source URL")
    if not raw.get("measured") or float(raw.get("published_gbytes") or 0) <= 0:
        raise ValueError(f"nccl_floors.yaml: entry {raw!r} needs `measured` and a published figure")
    algorithm = raw["algorithm"]
    return Floor(
        algorithm=None if algorithm is None else str(algorithm),
        published_gbytes=float(raw["published_gbytes"]),
        fraction=float(raw.get("fraction", fraction)),
        measured=str(raw["measured"]),
        source=str(raw["source"]),
    )


@cache
def load_floors() -> FloorTable:
    """Load (once) the floor table."""
    return parse_floors(floors_data())


def parse_floors(data: dict[str, Any]) -> FloorTable:
    """The floor table from its raw data; every entry must carry a source URL and a figure."""
    fraction = float(data["fraction"])
    node = tuple(NodeFloor(str(r["gpu"]), _floor(r, fraction)) for r in data["node"])
    fabric = tuple(
        FabricFloor(
            fabric=str(r["fabric"]),
            rate_gbps=int(r["rate_gbps"]),
            per=str(r["per"]),
            scope=tuple(str(s) for s in r["scope"]),
            floor=_floor(r, fraction),
        )
        for r in data["fabric"]
    )
    return FloorTable(fraction=fraction, node=node, fabric=fabric)


def node_floors(gpu_model: str | None) -> list[Floor]:
    """Single-node floors for an NVSwitch board of this GPU model, in data order."""
    return [n.floor for n in load_floors().node if gpu_model and n.gpu == gpu_model]


def fabric_floors(kind: str, gbps_per_node: int, rails: int, stage: str) -> list[tuple[Floor, int]]:
    """(floor, multiplier to the whole node) for a fabric at one stage ("pair" or "cluster").

    Per-rail figures match the rate of one rail (gbps_per_node / rails) and count once per rail
    (multiplier = rails); per-node figures match gbps_per_node exactly (multiplier 1).
    """
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    rails = max(1, rails)
    out: list[tuple[Floor, int]] = []
    for entry in load_floors().fabric:
        if entry.fabric != kind or stage not in entry.scope:
            continue
        if entry.per == "rail" and entry.rate_gbps * rails == gbps_per_node:
            out.append((entry.floor, rails))
        elif entry.per == "node" and entry.rate_gbps == gbps_per_node:
            out.append((entry.floor, 1))
    return out
