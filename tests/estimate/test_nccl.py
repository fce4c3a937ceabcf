"""The NCCL busbw model against published nccl-tests figures (fit and test apart)."""

from __future__ import annotations

import statistics

import pytest

from archform.estimate import nccl

POINTS = nccl.points()
TEST = [p for p in POINTS if not p.fit]


def _ratio(p: nccl.BusbwPoint) -> float:
    return nccl.predict(p) / p.busbw_gbytes


def test_test_set_is_measured_multi_node_runs_not_fitted() -> None:
    assert len(TEST) >= 4
    assert all(p.gpus_per_node == 8 and p.nodes >= 2 for p in TEST)
    assert all(p.source.startswith("https://") for p in POINTS)


def test_test_set_median_within_15_percent_and_none_off_by_2x() -> None:
    assert statistics.median(abs(_ratio(p) - 1) for p in TEST) <= 0.15
    assert all(0.5 <= _ratio(p) <= 2.0 for p in TEST)


def test_two_node_runs_are_no_longer_under_predicted() -> None:
    # The ring-only model (0.92 x line rate) was 23-46% low on these published 2-node runs.
    for p in TEST:
        if p.nodes == 2:
            assert _ratio(p) >= 0.95, p.id


def test_algorithm_choice() -> None:
    # 2 x p5 (3200 Gbps, H100): the tree is bounded by the node's NVLS busbw (480 GB/s,
    # nccl-tests#212); forcing Ring gives the NIC aggregate; 3 nodes pick the ring.
    tree = nccl.allreduce_busbw(2, 8, 3200, "H100")
    assert tree.algorithm == "Tree" and tree.capped_by == "intra-node"
    assert tree.gbytes == pytest.approx(480)
    ring = nccl.allreduce_busbw(2, 8, 3200, "H100", "Ring")
    assert ring.algorithm == "Ring" and ring.gbytes == pytest.approx(400 * nccl.efficiency())
    assert nccl.allreduce_busbw(3, 8, 800, "A100").algorithm == "Ring"
