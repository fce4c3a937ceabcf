"""The training step model against published throughput (fit and test figures kept apart)."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

import pytest

from archform.estimate import training

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


def test_no_test_figure_off_by_2x_except_the_known_llama3_miss() -> None:
    off = {p.id for p in TEST if not 0.5 <= _ratio(p) <= 2.0}
    # Llama 3 405B (arXiv:2407.21783 Table 4): 16 pipeline stages with 16-32 micro-batches; the
    # report's interleaved schedule is not modelled (its virtual-stage count is not stated),
    # so the 1F1B bubble under-predicts MFU. Reported in bench/RESULTS-training.md.
    assert off <= {"llama3-405b-16384gpu", "llama3-405b-8192gpu"}


@pytest.mark.xfail(strict=True, reason="Llama 3 405B at 16,384 GPUs: 0.20 vs 0.41 MFU")
def test_every_test_figure_within_2x() -> None:
    assert all(0.5 <= _ratio(p) <= 2.0 for p in TEST)


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
