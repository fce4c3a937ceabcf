"""The quantitative models behind NET008 (the training step model) and STO003."""

from __future__ import annotations

import pytest

from archform.estimate import storage, training


def _step(framework: str, gbps: float, stage: int) -> training.StepTime:
    """70B on 32 x 8 H100 (989 dense BF16 TFLOPS), 4M-token steps, through the step model."""
    par = training.Parallelism(
        framework=framework, gpus=256, gpus_per_node=8, global_batch_tokens=4e6, zero_stage=stage
    )
    hw = training.ClusterRates("H100", 989.0, gbps)
    return training.step_time(training.ModelShape(70e9, 80, 8192), par, hw)


def test_fsdp_moves_one_and_a_half_times_zero_one() -> None:
    # ZeRO paper s7: stage 3 moves 3 Psi per step, stages 1-2 move 2 Psi (arXiv:1910.02054).
    zero1 = _step("deepspeed", 3200, 1)
    fsdp = _step("pytorch_fsdp", 3200, 3)
    assert fsdp.dp_sync_s == pytest.approx(1.5 * zero1.dp_sync_s)
    # 140 GB of bf16 gradients: each collective moves 255/256 of it at the node's busbw.
    (first, *_) = fsdp.collectives
    assert first.gbytes == pytest.approx(140.0)
    assert first.seconds == pytest.approx(255 / 256 * 140 / fsdp.dp_busbw_gbytes, rel=0.01)


def test_slow_fabric_exposes_what_the_fast_one_hides() -> None:
    # The NET008 pair: 200 Gbps RoCE exposes the FSDP collectives, 8 x 400 Gbps hides them.
    fast = _step("pytorch_fsdp", 3200, 3)
    slow = _step("pytorch_fsdp", 200, 3)
    assert fast.dp_exposed_s == 0.0
    assert slow.dp_exposed_s / slow.compute_s > 0.30
    assert slow.compute_s == pytest.approx(fast.compute_s)


def test_storage_model() -> None:
    # FSx PERSISTENT_2 1000 MB/s/TiB x 48 TiB = 48 GB/s (training-clusters.md s4).
    assert storage.throughput_gbps(48, 1000) == pytest.approx(48.0)
    assert storage.required_data_gbps(256) == pytest.approx(32.0)
    assert storage.checkpoint_bytes(70e9) == pytest.approx(1.12e12)
    assert storage.checkpoint_write_seconds(70e9, 12.0) == pytest.approx(93.3, rel=0.01)
