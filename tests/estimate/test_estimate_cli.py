"""`archform estimate`: the worked examples of inference-fleets.md §4 and the cost arithmetic."""

from __future__ import annotations

import json
import math

import pytest

import support
from archform.estimate.inference import memory_fit_for
from archform.estimate.prices import fleet_costs, load_prices
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


def test_cost_uses_spot_for_spot_nodes_and_on_demand_for_the_floor() -> None:
    fleet = load_paths([A10]).of_kind(InferenceFleet)[0].model
    assert isinstance(fleet, InferenceFleet)
    table = load_prices()
    gpu = table.get(fleet.gpu_pool.instance_type)
    system = table.get(fleet.system_pool.instance_type)  # type: ignore[union-attr]
    assert gpu is not None and gpu.spot is not None and system is not None
    floor = fleet.gpu_pool.on_demand_floor_per_region
    regions = len(fleet.placement.all_regions)
    at_min, at_max = fleet_costs(fleet, table)
    spot_min = fleet.gpu_pool.min_nodes_per_region - floor
    hourly = regions * (floor * gpu.on_demand + spot_min * gpu.spot
                        + fleet.system_pool.nodes_per_region * system.on_demand)  # type: ignore[union-attr]
    assert at_min.usd_per_hour == pytest.approx(hourly, abs=0.01)
    assert at_min.usd_per_month == pytest.approx(round(hourly, 2) * 730, abs=1)
    assert at_min.spot_nodes == regions * spot_min
    assert at_max.gpus == regions * fleet.gpu_pool.max_nodes_per_region * 2
    [est] = _json(str(A10))
    assert est["cost"]["at"][0]["usd_per_month"] == at_min.usd_per_month


def test_on_demand_fleet_never_uses_spot_prices() -> None:
    fleet = load_paths([H100]).of_kind(InferenceFleet)[0].model
    assert isinstance(fleet, InferenceFleet)
    at_min, _ = fleet_costs(fleet)
    price = load_prices().get("p5.48xlarge")
    assert price is not None
    assert at_min.spot_nodes == 0
    assert at_min.usd_per_hour is not None
    assert at_min.usd_per_hour >= fleet.gpu_pool.min_nodes_per_region * price.on_demand


def test_price_table_is_dated_and_covers_the_bundled_fleets() -> None:
    table = load_prices()
    assert table.as_of.year >= 2025
    assert set(table.regions) == {"aws", "gcp", "azure"}
    for path in (*support.bundled_blueprints(), GCP_FIXTURE):
        for doc in load_paths([path]).of_kind(InferenceFleet):
            fleet = doc.model
            assert isinstance(fleet, InferenceFleet)
            assert table.get(fleet.gpu_pool.instance_type), fleet.gpu_pool.instance_type
            if fleet.system_pool:
                assert table.get(fleet.system_pool.instance_type)
            if fleet.gpu_pool.purchase == "spot":
                price = table.get(fleet.gpu_pool.instance_type)
                assert price is not None and price.spot is not None
                assert price.spot < price.on_demand
    assert all(math.isfinite(p.on_demand) and p.on_demand > 0 for p in table.prices.values())


@pytest.mark.parametrize("args", [["--utilization", "7"], ["--format", "xml"],
                                  ["--tokens-per-gpu", "-1"]])
def test_bad_options_exit_2(args: list[str]) -> None:
    proc = support.run_cli(["estimate", str(A10), *args])
    assert proc.returncode == 2
    assert proc.stderr.strip()


def test_no_fleet_is_a_usage_error(tmp_path) -> None:
    path = tmp_path / "t.yaml"
    text = (support.BLUEPRINTS / "platform-two-tier.yaml").read_text().split("\n---\n")[0]
    path.write_text(text)
    proc = support.run_cli(["estimate", str(path)])
    assert proc.returncode == 2 and "InferenceFleet" in proc.stderr
