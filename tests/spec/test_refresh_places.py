"""scripts/refresh_places.py: every parser on a small checked-in sample of its source format.

The script cannot reach the providers from here (no network); these samples keep the real
field names of each format (tests/spec/data/refresh/README.md says where each comes from).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

import support

SAMPLES = Path(__file__).parent / "data" / "refresh"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    path = support.ROOT / "scripts" / "refresh_places.py"
    spec = importlib.util.spec_from_file_location("refresh_places", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["refresh_places"] = module
    spec.loader.exec_module(module)
    return module


def _json(name: str) -> object:
    return json.loads((SAMPLES / name).read_text("utf-8"))


def test_aws_offer_file_keeps_linux_shared_on_demand_only(script: ModuleType) -> None:
    prices = script.parse_aws_offer(_json("aws-offer.json"))
    assert prices == {("p5.48xlarge", "us-east-1"): 55.04, ("m6i.xlarge", "us-east-1"): 0.192}


def test_aws_spot_history_takes_each_zones_latest_then_the_median(script: ModuleType) -> None:
    # latest per zone: a 2.10 (not the older 1.90), b 2.50, c 1.70 -> median 2.10
    assert script.parse_aws_spot(_json("aws-spot.json")) == {("g5.12xlarge", "us-east-1"): 2.1}


def test_azure_retail_prices_split_on_demand_and_spot(script: ModuleType) -> None:
    data = _json("azure-retail.json")
    assert isinstance(data, dict)
    rows = script.parse_azure_retail(data["Items"])
    # Windows, Low Priority and Reservation meters are skipped.
    assert rows == {("Standard_NV72ads_A10_v5", "eastus"): [6.52, 1.956]}


def test_gcp_billing_skus_price_a_machine_by_its_parts(script: ModuleType) -> None:
    data = _json("gcp-skus.json")
    assert isinstance(data, dict)
    machines = {"n2-standard-8": (8, 32.0, None, 0), "a3-megagpu-8g": (208, 1872.0, "H100", 8)}
    rows = script.parse_gcp_skus(data["skus"], machines)
    od, spot = rows[("n2-standard-8", "us-central1")]
    assert od == pytest.approx(8 * 0.031611 + 32 * 0.004237)
    assert spot == pytest.approx(8 * 0.00765 + 32 * 0.001025)
    assert ("a3-megagpu-8g", "us-central1") not in rows  # no A3 or H100 SKU in the sample


def test_karpenter_maps_of_both_clouds(script: ModuleType) -> None:
    aws = script.parse_go_region_prices((SAMPLES / "karpenter-aws.go").read_text("utf-8"))
    assert aws == {"us-east-1": {"p5.48xlarge": 55.04, "p5.4xlarge": 6.88, "p5en.48xlarge": 63.296}}
    azure = script.parse_go_region_prices((SAMPLES / "karpenter-azure.go").read_text("utf-8"))
    assert azure == {
        "eastus": {"Standard_D8s_v5": 0.384, "Standard_NV72ads_A10_v5": 6.52},
        "westeurope": {"Standard_D8s_v5": 0.424},
    }


def test_autoscaler_gce_maps(script: ModuleType) -> None:
    text = (SAMPLES / "autoscaler-gce.go").read_text("utf-8")
    assert script.parse_go_map(text, "instancePrices") == {
        "e2-standard-8": 0.26805,
        "n2-standard-8": 0.3885,
    }
    assert script.parse_go_map(text, "preemptiblePrices") == {"e2-standard-8": 0.08041}


def test_offerings_and_zone_rows(script: ModuleType) -> None:
    rows = _json("offerings-region.json")
    assert isinstance(rows, list)
    assert script.parse_offerings(rows) == {
        "us-east-1": {"p5.48xlarge", "g5.12xlarge"},
        "eu-west-1": {"g5.12xlarge"},
    }
    zones = script.parse_zone_csv((SAMPLES / "gcp-zones.csv").read_text("utf-8"))
    assert zones == {
        "us-central1": {
            "us-central1-a": {"a3-megagpu-8g"},
            "us-central1-b": {"a3-megagpu-8g"},
            "us-central1-f": {"n4-standard-16"},
        }
    }


def test_bundled_gcp_zone_excerpt_parses_and_matches_places(script: ModuleType) -> None:
    excerpt = support.ROOT / "scripts" / "places" / "gcp-zones-skypilot-v8.csv"
    zones = script.parse_zone_csv(excerpt.read_text("utf-8"))
    from archform.spec.places import load_places

    gcp = load_places()["gcp"]
    assert set(zones) == set(gcp.regions)
    assert zones["us-central1"]["us-central1-a"] >= {"a3-megagpu-8g", "a3-highgpu-8g"}
