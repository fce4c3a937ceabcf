"""The training step model against published throughput (fit and test figures kept apart)."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

import pytest

from archform.estimate import nccl, training

CAL = training.load_calibration()
TEST = [p for p in CAL.points if not p.fit]
FIT = [p for p in CAL.points if p.fit]


def _ratio(p: training.Point) -> float:
    return training.predict(p) / p.value


def _loss(k: training.Constants) -> float:
    return sum(math.log(training.predict(p, k) / p.value) ** 2 for p in FIT)


def test_fit_and_test_sets_are_apart_and_both_non_trivial() -> None:
    assert len(FIT) >= 8 and len(TEST) >= 8
    assert not {p.id for p in FIT} & {p.id for p in TEST}
    # Every figure has its source.
    assert all(p.source.startswith("https://") for p in CAL.points)


def test_test_set_median_error_within_15_percent() -> None:
    errors = [abs(_ratio(p) - 1) for p in TEST]
    assert statistics.median(errors) <= 0.15


def test_fp8_test_set_median_error_within_15_percent() -> None:
    # NeMo / Megatron-Bridge FP8 tables (H100, B200): the fp8 efficiencies are fitted on the
    # fit figures only.
    fp8 = [p for p in TEST if p.par.precision == "fp8"]
    assert len(fp8) >= 8
    assert statistics.median(abs(_ratio(p) - 1) for p in fp8) <= 0.15


def test_every_test_figure_within_2x() -> None:
    # Includes Llama 3 405B (arXiv:2407.21783 Table 4) with its interleaved schedule.
    assert all(0.5 <= _ratio(p) <= 2.0 for p in TEST), {p.id: _ratio(p) for p in TEST}


def test_llama3_405b_within_20_percent_of_its_published_mfu() -> None:
    # 43 % / 41 % / 38 % BF16 MFU (Table 4); 1F1B without interleaving gave 0.26 and 0.20.
    llama = {p.id: p for p in TEST if p.id.startswith("llama3-405b")}
    assert len(llama) == 3
    for p in llama.values():
        assert 0.8 <= _ratio(p) <= 1.2, (p.id, training.predict(p))


def test_fp8_is_faster_than_bf16_but_below_twice() -> None:
    # FP8 doubles the GEMM peak (1,979 vs 989 TFLOPS, catalog) but not attention's: at one
    # efficiency for both, the speed-up is 1 / (6P / 2 + 12LHS) x (6P + 12LHS).
    shape = training.ModelShape(70.6e9, 80, 8192)
    hw = training.ClusterRates("H100", 989, 3200, 1979)
    par = training.Parallelism("megatron", 64, 8, 4, 4, sequence_length=8192)
    k = replace(CAL.constants, fp8_efficiency={"H100": CAL.constants.efficiency["H100"]})
    bf16 = training.step_time(shape, par, hw, k)
    fp8 = training.step_time(shape, replace(par, precision="fp8"), hw, k)
    gemm, attention = 6 * 70.6e9, 12 * 80 * 8192 * 8192
    speedup = (gemm + attention) / (gemm * 989 / 1979 + attention)
    assert bf16.compute_s / fp8.compute_s == pytest.approx(speedup)
    assert 1.0 < speedup < 2.0
    # A GPU without an FP8 rate computes at BF16 (TRN009 flags the blueprint).
    no_fp8 = training.step_time(
        shape, replace(par, precision="fp8"), replace(hw, fp8_peak_tflops=0), k
    )
    assert no_fp8.compute_s == pytest.approx(bf16.compute_s)


def test_zero_stage_collectives_follow_the_zero_paper() -> None:
    # Rajbhandari et al. s7: stages 0-2 move 2 Psi per step, stage 3 moves 3 Psi.
    shape = training.ModelShape(70.6e9, 80, 8192)
    hw = training.ClusterRates("H100", 989, 400)
    base = training.Parallelism("pytorch_fsdp", 128, 8, sequence_length=4096)
    by_stage = {z: training.step_time(shape, replace(base, zero_stage=z), hw) for z in range(4)}
    names = {z: [(c.name, c.what) for c in t.collectives] for z, t in by_stage.items()}
    assert names[0] == [("all-reduce", "gradients")]
    assert names[1] == names[2] == [("reduce-scatter", "gradients"), ("all-gather", "parameters")]
    assert names[3] == [*names[2], ("all-gather", "parameters")]
    assert by_stage[3].dp_sync_s == pytest.approx(by_stage[2].dp_sync_s * 1.5)
    # 16 nodes: NCCL's ring for every collective, so stage 0-2 move the same bytes.
    assert by_stage[0].dp_sync_s == pytest.approx(by_stage[1].dp_sync_s, rel=0.01)
    # 141 GB of bf16 gradients, 2(n-1)/n of them per GPU (n = 128, one ring of 8 ranks per
    # node) at the node's 400 Gbps line rate x NCCL's fitted efficiency (nccl_busbw.yaml).
    [ar] = by_stage[0].collectives
    busbw = 400 / 8 * nccl.efficiency()
    assert ar.seconds == pytest.approx(2 * 127 / 128 * 141.2 / busbw, rel=0.01)
    assert by_stage[3].step_s > by_stage[0].step_s


def test_stored_constants_are_a_local_optimum_of_the_fit_set() -> None:
    k = CAL.constants
    base = _loss(k)
    for gpu in k.efficiency:
        for step in (-0.01, 0.01):
            eff = dict(k.efficiency)
            eff[gpu] = round(eff[gpu] + step, 2)
            assert _loss(replace(k, efficiency=eff)) >= base
    for step in (-100.0, 100.0):
        assert _loss(replace(k, h0=k.h0 + step)) >= base
    for gpu in k.fp8_efficiency:
        for step in (-0.01, 0.01):
            eff8 = dict(k.fp8_efficiency)
            eff8[gpu] = round(eff8[gpu] + step, 2)
            assert _loss(replace(k, fp8_efficiency=eff8)) >= base
    for step in (-0.1, 0.1):
        if 0.0 <= k.dp_overlap + step <= 1.0:
            assert _loss(replace(k, dp_overlap=round(k.dp_overlap + step, 1))) >= base


def test_pipeline_bubble_is_p_minus_1_over_m() -> None:
    # Narayanan et al. (arXiv:2104.04473 s2.2.1): bubble fraction (p - 1) / m for 1F1B.
    shape = training.ModelShape(145.6e9, 80, 12288)
    hw = training.ClusterRates("A100", 312, 1600)
    par = training.Parallelism(
        "megatron", 1536, 8, 8, 8, sequence_length=2048, global_batch_tokens=2304 * 2048
    )
    t = training.step_time(shape, par, hw)
    assert t.data_parallel == 24 and t.micro_batches == 96
    assert t.bubble_s == pytest.approx(t.compute_s * 7 / 96)
    interleaved = training.step_time(shape, replace(par, virtual_stages=2), hw)
    assert interleaved.bubble_s == pytest.approx(t.bubble_s / 2)


def test_slow_fabric_exposes_gradient_sync() -> None:
    shape = training.ModelShape(70.6e9, 80, 8192)
    par = training.Parallelism("pytorch_fsdp", 128, 8, sequence_length=4096)
    fast = training.step_time(shape, par, training.ClusterRates("H100", 989, 3200))
    slow = training.step_time(shape, par, training.ClusterRates("H100", 989, 100))
    assert fast.dp_exposed_s == 0.0
    assert slow.dp_exposed_s > 0 and slow.tokens_per_s_per_gpu < fast.tokens_per_s_per_gpu


def test_article_headline_is_impossible() -> None:
    # Issue 22: 340K tokens/s for a 70B model on 32 H100s is ~4.5x the dense BF16 peak at
    # 6 FLOPs per parameter per token (989 TFLOPS per H100, catalog).
    shape = training.ModelShape(70e9, 80, 8192)
    mfu = training.implied_mfu(340_000, shape, 4096, 32, training.peak_tflops("H100"))
    assert mfu > 4.5
