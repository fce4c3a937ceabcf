"""The quantitative models behind NET008 and STO003 against the reference's worked numbers."""

from __future__ import annotations

import pytest

from archform.estimate import allreduce, storage


def test_ring_allreduce_matches_reference_example() -> None:
    # training-clusters.md s6: 70B bf16 = 140 GB of gradients at ~400 GB/s busbw ~ 0.7 s.
    seconds = allreduce.ring_allreduce_seconds(140e9, 256, 400e9)
    assert seconds == pytest.approx(0.7, rel=0.01)
    assert allreduce.ring_allreduce_seconds(140e9, 1, 400e9) == 0.0


def test_fsdp_moves_one_and_a_half_times_dp() -> None:
    common = dict(
        params=70e9,
        tokens=4e6,
        precision="bf16",
        gpus=256,
        nodes=32,
        gbps_per_node=3200,
        fabric_kind="infiniband",
        bf16_tflops=989,
    )
    ddp = allreduce.estimate_step(framework="pytorch_ddp", **common)  # type: ignore[arg-type]
    fsdp = allreduce.estimate_step(framework="pytorch_fsdp", **common)  # type: ignore[arg-type]
    assert ddp and fsdp
    assert fsdp.bandwidth_s == pytest.approx(1.5 * ddp.bandwidth_s)
    # 6 x 70e9 x 4e6 / (256 x 989e12 x 0.4) = 16.6 s of compute per step.
    assert fsdp.compute_s == pytest.approx(16.59, rel=0.01)
    assert fsdp.exposed_fraction < 0.30  # the textbook setup must not fire NET008


def test_slow_fabric_exposes_sync_and_no_bf16_gives_no_estimate() -> None:
    slow = allreduce.estimate_step(
        params=70e9,
        tokens=4e6,
        framework="pytorch_fsdp",
        precision="bf16",
        gpus=256,
        nodes=32,
        gbps_per_node=100,
        fabric_kind="ethernet",
        bf16_tflops=989,
    )
    assert slow and slow.exposed_fraction > 1.0
    assert (
        allreduce.estimate_step(
            params=7e9,
            tokens=4e6,
            framework="pytorch_ddp",
            precision="bf16",
            gpus=32,
            nodes=4,
            gbps_per_node=25,
            fabric_kind="ethernet",
            bf16_tflops=0,
        )
        is None
    )


def test_storage_model() -> None:
    # FSx PERSISTENT_2 1000 MB/s/TiB x 48 TiB = 48 GB/s (training-clusters.md s4).
    assert storage.throughput_gbps(48, 1000) == pytest.approx(48.0)
    assert storage.required_data_gbps(256) == pytest.approx(32.0)
    assert storage.checkpoint_bytes(70e9) == pytest.approx(1.12e12)
    assert storage.checkpoint_write_seconds(70e9, 12.0) == pytest.approx(93.3, rel=0.01)


def test_two_node_busbw_is_nccl_tree_not_the_ring() -> None:
    # 2 x p5.48xlarge (3200 Gbps EFA), NCCL default algorithm: 479.28 GB/s busbw at 8 GiB
    # (github.com/aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests/README.md).
    est = allreduce.estimate_step(
        params=8e9,
        tokens=4e6,
        framework="pytorch_ddp",
        precision="bf16",
        gpus=16,
        nodes=2,
        gbps_per_node=3200,
        fabric_kind="efa",
        bf16_tflops=989,
        gpu="H100",
    )
    assert est is not None
    assert est.busbw_bytes_per_s / 1e9 == pytest.approx(479.28, rel=0.05)
