"""All-reduce bus bandwidth across nodes: ring vs tree, as NCCL chooses, fitted on nccl-tests.

busbw is nccl-tests' figure, algbw x 2(N-1)/N for N ranks
(https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md). Large messages only:
the latency term is negligible at the 1-16 GB sizes the published peaks are read at.

Ring
    Every ring crosses each node boundary once, so the node's NICs carry the ring's whole
    per-rank volume: busbw = efficiency x NIC line rate per node (bytes/s).          [derived]
Tree (NCCL's tree / NVLS-tree: reduce inside the node over NVLink, then between nodes)
    With two nodes each node sends its reduced data once and receives the result once, S per
    direction instead of the ring's 2(N-1)/N x S, so busbw = efficiency x NIC rate x 2(N-1)/N,
    capped by the intra-node stage (the GPU's single-node NVLink busbw, data). With more nodes
    an inner node of the double binary tree carries twice that per link, so the tree gets
    half of it and the ring is at least as fast.                                    [derived]
NCCL picks the faster algorithm for large messages; an `algorithm` forced (NCCL_ALGO) is
honoured. `efficiency` (achieved over line rate) is the only fitted constant: the geometric
mean over the `fit` figures of spec/data/nccl_busbw.yaml (maintainers' per-NIC ring figures);
bench/nccl_bench.py reports the error on the measured multi-node runs (`fit: false`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data


@dataclass(frozen=True, slots=True)
class BusbwPoint:
    """One published all_reduce_perf figure."""

    id: str
    nodes: int
    gpus_per_node: int
    gpu: str
    nic_gbps_per_node: float
    algorithm: str | None
    busbw_gbytes: float
    fit: bool
    source: str


@dataclass(frozen=True, slots=True)
class Busbw:
    """Predicted all_reduce busbw and the algorithm that gives it."""

    gbytes: float
    algorithm: str  # "Ring" | "Tree" | "NVLink" (one node)
    capped_by: str | None  # "intra-node" when the NVLink stage bounds it


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_data("nccl_busbw.yaml")
    return data


def points() -> list[BusbwPoint]:
    """The published figures."""
    return [
        BusbwPoint(
            id=str(p["id"]),
            nodes=int(p["nodes"]),
            gpus_per_node=int(p["gpus_per_node"]),
            gpu=str(p["gpu"]),
            nic_gbps_per_node=float(p["nic_gbps_per_node"]),
            algorithm=None if p["algorithm"] is None else str(p["algorithm"]),
            busbw_gbytes=float(p["busbw_gbytes"]),
            fit=bool(p["fit"]),
            source=str(p["source"]),
        )
        for p in _data()["points"]
    ]


def intra_node_gbytes(gpu: str) -> float | None:
    """The GPU's largest published single-node all_reduce busbw, None when not known."""
    row = _data()["intra_node_busbw"].get(gpu)
    return None if row is None else float(row["gbytes"])


def _fit_efficiency() -> float:
    ratios = [
        p.busbw_gbytes / (p.nic_gbps_per_node / 8)
        for p in points()
        if p.fit and p.algorithm == "Ring"
    ]
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


@cache
def efficiency() -> float:
    """Achieved fraction of the NIC line rate (fitted on the `fit` figures)."""
    return round(_fit_efficiency(), 3)


def allreduce_busbw(
    nodes: int,
    gpus_per_node: int,
    nic_gbps_per_node: float,
    gpu: str,
    algorithm: str | None = None,
    eff: float | None = None,
) -> Busbw:
    """Large-message all_reduce busbw of `nodes` x `gpus_per_node` ranks."""
    k = efficiency() if eff is None else eff
    intra = intra_node_gbytes(gpu)
    if nodes <= 1:
        return Busbw(intra or 0.0, "NVLink", None)
    ranks = nodes * gpus_per_node
    line = nic_gbps_per_node / 8 * k
    ring = line
    tree = line * 2 * (ranks - 1) / ranks / (1 if nodes == 2 else 2)
    capped = intra is not None and tree > intra
    if capped and intra is not None:
        tree = intra
    if algorithm == "Ring" or (algorithm is None and ring >= tree):
        return Busbw(round(ring, 2), "Ring", None)
    return Busbw(round(tree, 2), "Tree", "intra-node" if capped else None)


def predict(point: BusbwPoint, eff: float | None = None) -> float:
    """The model's busbw for a published figure's setup."""
    return allreduce_busbw(
        point.nodes,
        point.gpus_per_node,
        point.nic_gbps_per_node,
        point.gpu,
        point.algorithm,
        eff,
    ).gbytes
