"""Prices per catalog type and region (spec/data/prices.json); totals name what is unpriced."""

from __future__ import annotations

import json
from pathlib import Path

import support
from archform.estimate.prices import load_prices
from archform.spec.catalog import load_catalog

A10 = support.BLUEPRINTS / "inference-3region-a10.yaml"
PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"
GCP_PRICED = ("a2-", "g2-", "c3-", "e2-", "n2-")  # families of the us-central1 snapshot


def test_every_catalog_type_has_a_price_or_a_stated_reason_in_every_listed_region() -> None:
    from archform.spec.places import load_places  # absent before issue 21

    table, places = load_prices(), load_places()
    unpriced: list[str] = []
    for name, info in load_catalog().instances.items():
        cloud = places[info.provider]
        regions = cloud.regions_offering(name) if name in cloud.known_types else []
        # Types without offering data: every region the price table lists, plus the
        # reason the offering data lacks them (the test below).
        for region in regions or sorted(table.prices.get(name, {})) or ["(no offering data)"]:
            price = table.get(name, region)
            if price is not None and price.on_demand is not None:
                assert price.on_demand > 0, (name, region)
                if price.spot is not None:
                    assert 0 < price.spot < price.on_demand, (name, region)
                continue
            # The stated reason must be true of this row, not just present.
            if info.provider == "azure":
                raise AssertionError(f"{name} is offered in {region} but has no price")
            if info.provider == "aws":
                assert region != "us-east-1", f"{name}: the AWS snapshot covers us-east-1"
            if info.provider == "gcp" and name.startswith(GCP_PRICED):
                assert region != "us-central1", f"{name}: the GCP snapshot covers us-central1"
            reason = table.why_unpriced(info.provider, spot=False)
            assert reason and "no price in the bundled table" not in reason, (name, region)
            unpriced.append(f"{name} in {region}")
    # What stays unpriced is a minority with a reason, not the table.
    priced = sum(len(v) for v in table.prices.values())
    assert priced > 2 * len(unpriced) or priced > 700, (priced, len(unpriced))


def test_types_without_offering_data_are_named_with_a_reason() -> None:
    from archform.spec.places import load_places  # absent before issue 21

    places = load_places()
    missing = sorted(
        name
        for name, info in load_catalog().instances.items()
        if name not in places[info.provider].known_types
    )
    data = json.loads((support.ROOT / "src/archform/spec/data/places.json").read_text("utf-8"))
    # GCP offerings were carried over for A2/A3/A4 only; AWS lists p3.16xlarge and
    # p6e-gb200.36xlarge in no region (moto 5.2.5's DescribeInstanceTypeOfferings).
    assert all(
        n.startswith(("c3-", "e2-", "g2-", "n2-", "a4x-", "p3.", "p6e-")) for n in missing
    ), missing
    assert "skypilot-catalog" in data["sources"]["gcp"]


def test_the_three_types_the_review_found_unpriced() -> None:
    table = load_prices()
    p5en = table.get("p5en.48xlarge", "us-east-1")
    e2 = table.get("e2-standard-8", "us-central1")
    assert p5en is not None and p5en.on_demand == 63.296  # AWS Price List via karpenter
    assert e2 is not None and e2.on_demand == 0.26805 and e2.spot == 0.08041
    # No bundled source prices A3 Mega; the reason says so and how to fill it.
    assert table.get("a3-megagpu-8g", "us-central1") is None
    assert "A3" in table.why_unpriced("gcp", spot=False)


def test_each_region_is_priced_at_its_own_price() -> None:
    table = load_prices()
    east = table.rate("Standard_D8s_v5", "eastus", False)
    west = table.rate("Standard_D8s_v5", "westeurope", False)
    assert east is not None and west is not None and east != west


def test_estimate_names_the_unpriced_part_instead_of_blanking_the_total() -> None:
    proc = support.run_cli(["estimate", str(A10), "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    (at_min, _) = json.loads(proc.stdout)[0]["cost"]["at"]
    # The Azure snapshot has no spot prices: the spot nodes are named, the rest is summed.
    assert at_min["usd_per_month"] is not None and at_min["usd_per_month"] > 0
    assert "Standard_NV72ads_A10_v5 in eastus (spot)" in at_min["missing"]
    text = support.run_cli(["estimate", str(A10)]).stdout
    assert "at least $" in text
    assert "no price for Standard_NV72ads_A10_v5 in eastus (spot)" in text


def test_diff_cost_delta_names_what_is_unpriced(tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    text = PLATFORM.read_text("utf-8")
    assert text.count("max_nodes_per_region: 20") == 1
    new.write_text(text.replace("max_nodes_per_region: 20", "max_nodes_per_region: 30"), "utf-8")
    proc = support.run_cli(["diff", str(PLATFORM), str(new)])
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "sivaro-serve at max size" in x)
    assert ">= $" in line and "(no price for " in line, line
    assert "g5.12xlarge in eu-west-1," in line and "m6i.xlarge in ap-northeast-1" in line, line
