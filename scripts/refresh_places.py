#!/usr/bin/env python3
"""Rebuild src/archform/spec/data/places.json and prices.json from the providers' tables.

places.json: regions and zones per cloud, and which catalog instance types each region
(and, on GCP, each zone) offers. prices.json: USD per hour, on-demand and spot, per catalog
type and region, or the reason a price is missing. `archform validate` reads places.json;
`archform estimate` and `archform diff` read prices.json.

Two ways in, each source named in the files it writes:

  Snapshots (what built the bundled files; works offline):
    --moto DIR              the installed moto package: AWS regions, zones and per-region
                            instance type offerings (moto/ec2/resources/instance_type_offerings,
                            recorded from EC2 DescribeInstanceTypeOfferings)
    --karpenter-aws FILE    aws/karpenter-provider-aws pkg/providers/pricing/
                            zz_generated.pricing_aws.go (AWS Price List API, us-east-1)
    --karpenter-azure FILE  Azure/karpenter-provider-azure pkg/providers/pricing/
                            zz_generated.pricing.go (Azure Retail Prices API, Linux,
                            consumption, every public region)
    --autoscaler-gce FILE   kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/
                            gce_price_info.go (us-central1 list prices, on-demand and spot)
    --gcp-zones CSV         rows InstanceType,Region,AvailabilityZone (a SkyPilot
                            catalogs/v8/gcp/vms.csv, or scripts/places/gcp-zones-skypilot-v8.csv)
    --azure-zones FILE      scripts/places/azure-az-regions.txt

  Online (needs the network, which archform's build machine does not have):
    --aws-offer FILE|URL    AWS Price List bulk offer file of one region (JSON), repeatable:
                            https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.json
    --aws-spot FILE         `aws ec2 describe-spot-price-history --product-descriptions
                            Linux/UNIX --start-time <now>` output (needs AWS credentials)
    --azure-retail          query https://prices.azure.com/api/retail/prices (no credentials)
    --gcp-skus FILE|URL     Cloud Billing Catalog SKUs of Compute Engine (service
                            6F81-5844-456A; the URL needs an API key)

tests/spec/test_refresh_places.py runs every parser on the small samples in
tests/spec/data/refresh/ (one per format).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import json
import re
import statistics
import sys
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "src" / "archform" / "spec" / "data"
AZURE_RETAIL = "https://prices.azure.com/api/retail/prices"

# --- parsers (each tested on a checked-in sample) -------------------------------------------

_GO_REGION = re.compile(
    r'^\s*(?:initialOnDemandPrices\[)?"([a-z0-9-]+)"\]?\s*(?:=\s*map\[string\]float64)?\s*[:{]'
)
_GO_PRICE = re.compile(r'"([A-Za-z0-9_.\- ]+)":\s*([0-9.]+)')


def parse_go_region_prices(text: str) -> dict[str, dict[str, float]]:
    """Karpenter's generated maps: region -> {instance type: USD/h} (AWS and Azure files)."""
    out: dict[str, dict[str, float]] = {}
    region: str | None = None
    for line in text.splitlines():
        head = _GO_REGION.match(line)
        if head and (line.rstrip().endswith("{")):
            region = head.group(1)
            out.setdefault(region, {})
            continue
        if region is None:
            continue
        for name, price in _GO_PRICE.findall(line):
            out[region][name] = float(price)
    return out


def parse_go_map(text: str, var: str) -> dict[str, float]:
    """One `var = map[string]float64{...}` block of a Go file."""
    start = text.index(f"{var} = map[string]float64{{")
    end = text.index("\n\t}", start)
    return {k: float(v) for k, v in _GO_PRICE.findall(text[start:end])}


def parse_offerings(rows: Iterable[dict[str, str]]) -> dict[str, set[str]]:
    """DescribeInstanceTypeOfferings items -> location -> instance types."""
    out: dict[str, set[str]] = {}
    for row in rows:
        out.setdefault(row["Location"], set()).add(row["InstanceType"])
    return out


def parse_zone_csv(text: str) -> dict[str, dict[str, set[str]]]:
    """InstanceType,Region,AvailabilityZone rows -> region -> zone -> instance types."""
    out: dict[str, dict[str, set[str]]] = {}
    for row in csv.DictReader(text.splitlines()):
        zones = out.setdefault(row["Region"], {})
        types = zones.setdefault(row["AvailabilityZone"], set())
        if row.get("InstanceType"):
            types.add(row["InstanceType"])
    return out


def parse_aws_offer(data: dict[str, Any]) -> dict[tuple[str, str], float]:
    """AWS Price List offer file -> (instance type, region code) -> on-demand USD/h.

    Linux, shared tenancy, no pre-installed software, license included, capacity 'Used'
    (the rows that are the on-demand list price of a running instance).
    """
    skus: dict[str, tuple[str, str]] = {}
    for sku, product in data.get("products", {}).items():
        a = product.get("attributes", {})
        if (
            product.get("productFamily") == "Compute Instance"
            and a.get("operatingSystem") == "Linux"
            and a.get("tenancy") == "Shared"
            and a.get("preInstalledSw") == "NA"
            and a.get("capacitystatus") == "Used"
            and a.get("licenseModel", "No License required") == "No License required"
        ):
            skus[sku] = (a["instanceType"], a["regionCode"])
    out: dict[tuple[str, str], float] = {}
    for sku, terms in data.get("terms", {}).get("OnDemand", {}).items():
        if sku not in skus:
            continue
        for term in terms.values():
            for dim in term["priceDimensions"].values():
                if dim.get("unit") == "Hrs":
                    usd = float(dim["pricePerUnit"]["USD"])
                    if usd > 0:
                        out[skus[sku]] = usd
    return out


def parse_aws_spot(data: dict[str, Any]) -> dict[tuple[str, str], float]:
    """describe-spot-price-history output -> (type, region) -> median of the zones' latest."""
    latest: dict[tuple[str, str], tuple[str, float]] = {}
    for item in data.get("SpotPriceHistory", []):
        key = (item["InstanceType"], item["AvailabilityZone"])
        stamp = str(item["Timestamp"])
        if key not in latest or stamp > latest[key][0]:
            latest[key] = (stamp, float(item["SpotPrice"]))
    per_region: dict[tuple[str, str], list[float]] = {}
    for (itype, zone), (_, price) in latest.items():
        per_region.setdefault((itype, zone[:-1]), []).append(price)
    return {k: round(statistics.median(v), 6) for k, v in per_region.items()}


def parse_azure_retail(
    items: Iterable[dict[str, Any]],
) -> dict[tuple[str, str], list[float | None]]:
    """Azure Retail Prices items -> (ARM size, region) -> [on-demand, spot] USD/h (Linux)."""
    out: dict[tuple[str, str], list[float | None]] = {}
    for item in items:
        if item.get("type") != "Consumption" or item.get("unitOfMeasure") != "1 Hour":
            continue
        if str(item.get("productName", "")).endswith(" Windows"):
            continue
        meter = str(item.get("meterName", "")) + " " + str(item.get("skuName", ""))
        if "Low Priority" in meter:
            continue
        key = (str(item["armSkuName"]), str(item["armRegionName"]))
        row = out.setdefault(key, [None, None])
        row[1 if "Spot" in meter else 0] = float(item["retailPrice"])
    return out


# GCP Cloud Billing SKUs price a machine by its parts. Description prefixes per machine
# family (core, RAM) and per GPU model; checked against the SKU list on the first online run.
GCP_PARTS = {
    "a2": ("A2 Instance Core", "A2 Instance Ram"),
    "a3": ("A3 Instance Core", "A3 Instance Ram"),
    "c3": ("C3 Instance Core", "C3 Instance Ram"),
    "e2": ("E2 Instance Core", "E2 Instance Ram"),
    "g2": ("G2 Instance Core", "G2 Instance Ram"),
    "n2": ("N2 Instance Core", "N2 Instance Ram"),
}
GCP_GPUS = {
    "A100-40GB": "Nvidia Tesla A100 GPU",
    "A100": "Nvidia A100 80GB GPU",
    "H100": "Nvidia H100 80GB GPU",
    "L4": "Nvidia L4 GPU",
}


def parse_gcp_skus(
    skus: Iterable[dict[str, Any]], machines: dict[str, tuple[int, float, str | None, int]]
) -> dict[tuple[str, str], list[float | None]]:
    """Cloud Billing SKUs -> (machine type, region) -> [on-demand, spot] USD/h.

    `machines`: machine type -> (vCPUs, memory GiB, GPU model or None, GPU count).
    """
    unit: dict[tuple[str, str, str], float] = {}
    for sku in skus:
        usage = sku.get("category", {}).get("usageType")
        if usage not in ("OnDemand", "Preemptible"):
            continue
        desc = str(sku.get("description", "")).removeprefix("Spot Preemptible ")
        rate = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][-1]["unitPrice"]
        price = int(rate.get("units", 0) or 0) + int(rate.get("nanos", 0)) / 1e9
        for region in sku.get("serviceRegions", []):
            unit[(desc.split(" running in ")[0], region, usage)] = price
    out: dict[tuple[str, str], list[float | None]] = {}
    regions = {r for _, r, _ in unit}
    for name, (vcpus, mem, gpu, count) in machines.items():
        parts = GCP_PARTS.get(name.split("-")[0])
        if parts is None:
            continue
        for region in regions:
            row: list[float | None] = [None, None]
            for i, usage in enumerate(("OnDemand", "Preemptible")):
                core = unit.get((parts[0], region, usage))
                ram = unit.get((parts[1], region, usage))
                gpu_rate = unit.get((GCP_GPUS.get(gpu or "", ""), region, usage)) if gpu else 0.0
                if core is not None and ram is not None and gpu_rate is not None:
                    row[i] = round(vcpus * core + mem * ram + count * gpu_rate, 6)
            if row[0] is not None:
                out[(name, region)] = row
    return out


# --- building the two files -----------------------------------------------------------------


def _catalog() -> dict[str, dict[str, Any]]:
    data = json.loads((DATA / "catalog.json").read_text("utf-8"))
    fams = data.get("families") or {}
    out = {}
    for name, entry in data["instances"].items():
        raw = {**(fams.get(entry.get("family")) or {}), **entry}
        out[name] = raw
    return out


def _read(path_or_url: str) -> bytes:
    if path_or_url.startswith("https://"):
        with urllib.request.urlopen(path_or_url, timeout=120) as resp:
            return bytes(resp.read())
    raw = Path(path_or_url).read_bytes()
    return gzip.decompress(raw) if path_or_url.endswith(".gz") else raw


def _azure_retail_items(sizes: Iterable[str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for size in sorted(sizes):
        url: str | None = (
            f"{AZURE_RETAIL}?$filter=serviceName%20eq%20%27Virtual%20Machines%27%20and%20"
            f"armSkuName%20eq%20%27{size}%27"
        )
        while url:
            page = json.loads(_read(url))
            items.extend(page.get("Items", []))
            url = page.get("NextPageLink")
    return items


def build(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """The places and prices documents."""
    catalog = _catalog()
    by_provider: dict[str, set[str]] = {}
    for name, raw in catalog.items():
        by_provider.setdefault(str(raw["provider"]), set()).add(name)
    places: dict[str, Any] = {"sources": {}, "aws": {}, "gcp": {}, "azure": {}}
    prices: dict[str, Any] = {"sources": {}, "reasons": {}, "instances": {}}

    def put(itype: str, region: str, od: float | None, spot: float | None) -> None:
        entry = prices["instances"].setdefault(itype, {})
        old = entry.get(region, [None, None])
        entry[region] = [od if od is not None else old[0], spot if spot is not None else old[1]]

    # AWS
    moto = Path(args.moto)
    offer_dir = moto / "ec2" / "resources" / "instance_type_offerings"
    aws: dict[str, Any] = {}
    for path in sorted((offer_dir / "region").glob("*.json.gz")):
        region = path.name.removesuffix(".json.gz")
        offered = parse_offerings(json.loads(gzip.decompress(path.read_bytes())))
        zones_path = offer_dir / "availability-zone" / path.name
        zones = parse_offerings(json.loads(gzip.decompress(zones_path.read_bytes())))
        aws[region] = {
            "zones": sorted(zones),
            "types": sorted(offered.get(region, set()) & by_provider["aws"]),
        }
    # A catalog type the offerings list nowhere is unknown to the data, not "offered nowhere".
    listed = set().union(*(set(r["types"]) for r in aws.values()))
    places["aws"] = {"regions": aws, "known_types": sorted(by_provider["aws"] & listed)}
    places["sources"]["aws"] = args.moto_source
    if args.karpenter_aws:
        table = parse_go_region_prices(Path(args.karpenter_aws).read_text("utf-8"))
        for region, rows in table.items():
            for itype in by_provider["aws"] & set(rows):
                put(itype, region, rows[itype], None)
        prices["sources"]["aws"] = args.karpenter_aws_source
    for offer in args.aws_offer or []:
        for (itype, region), od in parse_aws_offer(json.loads(_read(offer))).items():
            if itype in by_provider["aws"]:
                put(itype, region, od, None)
    if args.aws_spot:
        for (itype, region), sp in parse_aws_spot(json.loads(_read(args.aws_spot))).items():
            if itype in by_provider["aws"]:
                put(itype, region, None, sp)
    # Azure
    azure_regions: dict[str, Any] = {}
    az_regions = {
        line.strip()
        for line in Path(args.azure_zones).read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    if args.karpenter_azure:
        table = parse_go_region_prices(Path(args.karpenter_azure).read_text("utf-8"))
        for region, rows in sorted(table.items()):
            azure_regions[region] = {
                "zones": ["1", "2", "3"] if region in az_regions else [],
                "types": sorted(by_provider["azure"] & set(rows)),
            }
            for itype in by_provider["azure"] & set(rows):
                put(itype, region, rows[itype], None)
        prices["sources"]["azure"] = args.karpenter_azure_source
    if args.azure_retail:
        for (size, region), (od, sp) in parse_azure_retail(
            _azure_retail_items(by_provider["azure"])
        ).items():
            if size in by_provider["azure"]:
                put(size, region, od, sp)
                azure_regions.setdefault(region, {"zones": [], "types": []})
                azure_regions[region]["types"] = sorted({*azure_regions[region]["types"], size})
    listed = set().union(*(set(r["types"]) for r in azure_regions.values()))
    places["azure"] = {
        "regions": azure_regions,
        "known_types": sorted(by_provider["azure"] & listed),
    }
    places["sources"]["azure"] = args.azure_source
    # GCP
    zone_rows = parse_zone_csv(Path(args.gcp_zones).read_text("utf-8"))
    gcp_regions: dict[str, Any] = {}
    zone_types: dict[str, list[str]] = {}
    known: set[str] = set()
    for region, zones in sorted(zone_rows.items()):
        gcp_regions[region] = {"zones": sorted(zones), "types": []}
        offered: set[str] = set()
        for zone, types in zones.items():
            mine = types & by_provider["gcp"]
            known |= mine
            offered |= mine
            if mine:
                zone_types[zone] = sorted(mine)
        gcp_regions[region]["types"] = sorted(offered)
    places["gcp"] = {"regions": gcp_regions, "zone_types": zone_types, "known_types": sorted(known)}
    places["sources"]["gcp"] = args.gcp_source
    if args.autoscaler_gce:
        text = Path(args.autoscaler_gce).read_text("utf-8")
        od_map = parse_go_map(text, "instancePrices")
        sp_map = parse_go_map(text, "preemptiblePrices")
        for itype in by_provider["gcp"] & set(od_map):
            put(itype, "us-central1", od_map[itype], sp_map.get(itype))
        prices["sources"]["gcp"] = args.autoscaler_gce_source
    if args.gcp_skus:
        machines = {
            n: (
                int(r["vcpus"]),
                float(r["memory_gib"]),
                (r.get("gpu") or {}).get("model"),
                int((r.get("gpu") or {}).get("count", 0)),
            )
            for n, r in catalog.items()
            if r["provider"] == "gcp"
        }
        data = json.loads(_read(args.gcp_skus))
        for (itype, region), (od, sp) in parse_gcp_skus(data.get("skus", []), machines).items():
            put(itype, region, od, sp)
    prices["reasons"] = json.loads(Path(args.reasons).read_text("utf-8"))
    prices["instances"] = {
        k: dict(sorted(v.items())) for k, v in sorted(prices["instances"].items())
    }
    return places, prices


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--moto", required=True)
    p.add_argument("--moto-source", default="moto (installed version) instance_type_offerings")
    p.add_argument("--karpenter-aws")
    p.add_argument("--karpenter-aws-source", default="")
    p.add_argument("--karpenter-azure")
    p.add_argument("--karpenter-azure-source", default="")
    p.add_argument("--autoscaler-gce")
    p.add_argument("--autoscaler-gce-source", default="")
    p.add_argument("--gcp-zones", default=str(ROOT / "scripts/places/gcp-zones-skypilot-v8.csv"))
    p.add_argument("--gcp-source", default="")
    p.add_argument("--azure-zones", default=str(ROOT / "scripts/places/azure-az-regions.txt"))
    p.add_argument("--azure-source", default="")
    p.add_argument("--reasons", default=str(ROOT / "scripts/places/reasons.json"))
    p.add_argument("--aws-offer", action="append")
    p.add_argument("--aws-spot")
    p.add_argument("--azure-retail", action="store_true")
    p.add_argument("--gcp-skus")
    p.add_argument("--as-of", default=dt.date.today().isoformat())
    p.add_argument("--out", default=str(DATA))
    args = p.parse_args(argv)
    places, prices = build(args)
    places["as_of"] = prices["as_of"] = args.as_of
    prices["hours_per_month"] = 730
    out = Path(args.out)
    for name, doc in (("places.json", places), ("prices.json", prices)):
        text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
        (out / name).write_text(text, "utf-8")
        sys.stdout.write(f"wrote {out / name} ({len(text):,} bytes)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
