"""`archform estimate`: the worked examples of inference-fleets.md §4 and the cost arithmetic."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import support
from archform.estimate.inference import memory_fit_for
from archform.estimate.prices import PriceTable, fleet_costs, load_prices
from archform.spec import InferenceFleet, load_paths

GCP_FIXTURE = support.ROOT / "tests" / "render" / "fleet" / "gcp-fleet.yaml"
A10 = support.BLUEPRINTS / "inference-3region-a10.yaml"
H100 = support.BLUEPRINTS / "inference-h100-single-region.yaml"


def _json(*args: str) -> list[dict]:
    proc = support.run_cli(["estimate", *args, "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _within(value: float, reference: float, tolerance: float = 0.05) -> bool:
    return abs(value - reference) <= tolerance * reference


def test_worked_example_llama_8b_on_one_l4() -> None:
    # Reference: Llama-3.1-8B bf16 = 14.96 GiB, 128 KiB KV/token; 1 x L4 (22.49 GiB usable),
    # utilisation 0.92, 0.83 GiB runtime -> 4.91 GiB KV, about 40k tokens (kvplan).
    [est] = _json(str(GCP_FIXTURE), "--gpu", "L4", "--utilization", "0.92")
    mem = est["memory"]
    assert _within(mem["weights_gib"], 14.96)
    assert _within(mem["weights_gib"], 15.0)
    assert mem["kv_bytes_per_token"] == 128 * 1024
    assert _within(mem["budget_gib"], 20.69)
    assert _within(mem["free_for_kv_gib"], 4.91)
    assert _within(mem["max_kv_tokens"], 40_000)
    assert est["gpu"] == "L4"


def test_default_max_model_len_does_not_fit_on_l4() -> None:
    # "The default max_model_len of 131072 will not start" (kvplan output).
    fleet = load_paths([GCP_FIXTURE]).of_kind(InferenceFleet)[0].model
    assert isinstance(fleet, InferenceFleet)
    long = fleet.model.model_copy(update={"max_context_tokens": 131072})
    fit = memory_fit_for(long, 22.49, 1, 0.92)
    assert not fit.fits
    assert fit.max_kv_tokens < 131072


def test_llama_70b_kv_is_320_kib_per_token() -> None:
    [est] = _json(str(H100))
    assert est["memory"]["kv_bytes_per_token"] == 320 * 1024


def test_text_output_states_assumption_and_price_date() -> None:
    proc = support.run_cli(["estimate", str(A10)])
    assert proc.returncode == 0, proc.stderr
    table = load_prices()
    assert f"prices as of {table.as_of.isoformat()}" in proc.stdout
    assert "tok/s per GPU" in proc.stdout and "--tokens-per-gpu" in proc.stdout
    assert "at min" in proc.stdout and "at max" in proc.stdout


def test_tokens_per_gpu_override_changes_replicas() -> None:
    [base] = _json(str(A10))
    [fast] = _json(str(A10), "--tokens-per-gpu", str(base["capacity"]["tokens_per_gpu_knee"] * 4))
    assert fast["capacity"]["assumption"] == "overridden"
    assert fast["capacity"]["replicas_needed_total"] < base["capacity"]["replicas_needed_total"]


def _with_rows(**rows: dict[str, tuple[float | None, float | None]]) -> PriceTable:
    """The bundled table with some (type -> region -> price) rows set by the test."""
    table = load_prices()
    prices = {k: dict(v) for k, v in table.prices.items()}
    for itype, regions in rows.items():
        prices.setdefault(itype, {}).update(regions)
    return replace(table, prices=prices)


def test_cost_uses_spot_for_spot_nodes_and_on_demand_for_the_floor() -> None:
    fleet = load_paths([A10]).of_kind(InferenceFleet)[0].model
    assert isinstance(fleet, InferenceFleet) and fleet.system_pool is not None
    gpu_type, sys_type = fleet.gpu_pool.instance_type, fleet.system_pool.instance_type
    base = load_prices()
    regions = fleet.placement.all_regions
    # The snapshot has no Azure spot prices: give each region one (test figures, not quotes).
    table = _with_rows(
        **{gpu_type: {r: (base.rate(gpu_type, r, False), 0.5 + i) for i, r in enumerate(regions)}}
    )
    floor = fleet.gpu_pool.on_demand_floor_per_region
    spot_min = fleet.gpu_pool.min_nodes_per_region - floor
    hourly = 0.0
    for i, region in enumerate(regions):
        od, sys_od = base.rate(gpu_type, region, False), base.rate(sys_type, region, False)
        assert od is not None and sys_od is not None, region
        hourly += floor * od + spot_min * (0.5 + i) + fleet.system_pool.nodes_per_region * sys_od
    at_min, at_max = fleet_costs(fleet, table)
    assert at_min.missing == ()
    assert at_min.usd_per_hour == pytest.approx(hourly, abs=0.01)
    assert at_min.usd_per_month == pytest.approx(round(hourly, 2) * 730, abs=1)
    assert at_min.spot_nodes == len(regions) * spot_min
    assert at_max.gpus == len(regions) * fleet.gpu_pool.max_nodes_per_region * 2


def test_on_demand_fleet_never_uses_spot_prices() -> None:
    fleet = load_paths([H100]).of_kind(InferenceFleet)[0].model
    assert isinstance(fleet, InferenceFleet) and fleet.system_pool is not None
    (region,) = fleet.placement.all_regions
    table = _with_rows(
        **{
            "p5.48xlarge": {region: (60.0, 1.0)},
            fleet.system_pool.instance_type: {region: (0.5, None)},
        }
    )
    at_min, _ = fleet_costs(fleet, table)
    assert at_min.spot_nodes == 0 and at_min.missing == ()
    nodes = fleet.gpu_pool.min_nodes_per_region
    assert at_min.usd_per_hour == pytest.approx(
        nodes * 60.0 + fleet.system_pool.nodes_per_region * 0.5
    )


@pytest.mark.parametrize(
    "args",
    [["--utilization", "7"], ["--format", "xml"], ["--tokens-per-gpu", "-1"], ["--gpu", "X9000"]],
)
def test_bad_options_exit_2(args: list[str]) -> None:
    proc = support.run_cli(["estimate", str(A10), *args])
    assert proc.returncode == 2
    assert proc.stderr.strip()


def test_training_cluster_alone_gets_the_training_estimate(tmp_path) -> None:
    # Before issue 22 a TrainingCluster without a fleet was a usage error; it now gets the
    # training estimate (tests/estimate/test_training_cli.py checks its figures).
    path = tmp_path / "t.yaml"
    text = (support.BLUEPRINTS / "platform-two-tier.yaml").read_text().split("\n---\n")[0]
    path.write_text(text)
    proc = support.run_cli(["estimate", str(path)])
    assert proc.returncode == 0, proc.stderr
    assert "tokens/s per GPU" in proc.stdout and "MFU" in proc.stdout


def test_single_stream_rate_is_per_replica_not_per_gpu() -> None:
    # One stream runs on every GPU of its tensor-parallel replica: with TP=4 its decode rate
    # is the replica's, four times the per-GPU share the text used to print as "single stream".
    [est] = _json(str(H100))
    cap = est["capacity"]
    assert est["tensor_parallel"] == 4 == cap["replica_gpus"]
    assert cap["tokens_per_stream"] == pytest.approx(cap["tokens_per_gpu_single"] * 4, abs=0.02)
    assert cap["tokens_per_replica_knee"] == pytest.approx(cap["tokens_per_gpu_knee"] * 4, abs=0.02)
    text = support.run_cli(["estimate", str(H100)]).stdout
    assert f"one stream decodes at {cap['tokens_per_stream']:.0f} tok/s on a replica" in text
    assert f"({cap['tokens_per_replica_knee']:,.0f} tok/s per replica of 4 GPUs)" in text
    assert "tok/s single stream" not in text
