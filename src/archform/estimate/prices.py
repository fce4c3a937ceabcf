"""Dated instance prices per region (spec/data/prices.json) and the monthly cost of a fleet.

prices.json is written by scripts/refresh_places.py from the providers' published price
lists (sources and dates in the file's ``sources``): USD per hour, Linux, no discounts or
commitments, on-demand and spot per catalog instance type and region. A type or region
without a price has a stated reason (``reasons``), and a total names what it could not
price instead of going blank.

Cost model: GPU pools at their purchase option per node (spot pools at the spot price, the
on-demand floor and on-demand/reserved pools at the on-demand list price; reservations'
discounts are not modelled), plus the system pool on-demand, times 730 hours per month,
each region at its own price.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the fleet models load with a fleet only (training lint needs prices too)
    from archform.spec.models.inference import InferenceFleet


@dataclass(frozen=True, slots=True)
class Price:
    """USD per hour of one instance type in one region (None: not published / not known)."""

    instance: str
    region: str
    on_demand: float | None
    spot: float | None


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Every price with its date and sources."""

    as_of: dt.date
    verified: bool
    sources: dict[str, str]
    hours_per_month: int
    prices: dict[str, dict[str, tuple[float | None, float | None]]]
    reasons: dict[str, dict[str, str]]

    def get(self, instance: str, region: str) -> Price | None:
        """The prices of a type in a region, or None when the table has neither."""
        row = self.prices.get(instance, {}).get(region)
        return None if row is None else Price(instance, region, row[0], row[1])

    def rate(self, instance: str, region: str, spot: bool) -> float | None:
        """USD per hour at the on-demand or spot price, or None."""
        price = self.get(instance, region)
        if price is None:
            return None
        return price.spot if spot else price.on_demand

    def why_unpriced(self, provider: str, spot: bool) -> str:
        """The stated reason a price of this provider is missing."""
        reasons = self.reasons.get(provider, {})
        return reasons.get("spot" if spot else "on_demand", "no price in the bundled table")


@cache
def load_prices() -> PriceTable:
    """Load the bundled table once."""
    text = resources.files("archform.spec").joinpath("data/prices.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    prices = {
        name: {region: (row[0], row[1]) for region, row in sorted(regions.items())}
        for name, regions in sorted(data["instances"].items())
    }
    return PriceTable(
        as_of=dt.date.fromisoformat(str(data["as_of"])),
        verified=False,  # machine-read price lists, but not re-read from the providers here
        sources={str(k): str(v) for k, v in sorted(data["sources"].items())},
        hours_per_month=int(data["hours_per_month"]),
        prices=prices,
        reasons={
            str(k): {str(a): str(b) for a, b in v.items()} for k, v in data["reasons"].items()
        },
    )


def unpriced(instance: str, region: str, spot: bool = False) -> str:
    """How a total names a price it lacks: 'p5.48xlarge in eu-north-1 (spot)'."""
    return f"{instance} in {region}" + (" (spot)" if spot else "")


@dataclass(frozen=True, slots=True)
class FleetCost:
    """GPUs and monthly cost at one fleet size (all regions).

    ``usd_per_hour``/``usd_per_month`` sum what has a price; ``missing`` names the rest
    (then the sum is a lower bound). Both are None only when nothing has a price.
    """

    label: str
    gpu_nodes: int
    spot_nodes: int
    gpus: int
    usd_per_hour: float | None
    usd_per_month: float | None
    missing: tuple[str, ...]


def fleet_costs(fleet: InferenceFleet, table: PriceTable | None = None) -> list[FleetCost]:
    """Cost at min_nodes_per_region and at max_nodes_per_region, across every region."""
    table = table or load_prices()
    pool = fleet.gpu_pool
    regions = fleet.placement.all_regions
    per_node = pool.gpu.per_node if pool.gpu else 1
    spot = pool.purchase == "spot"
    floor = min(pool.on_demand_floor_per_region, pool.max_nodes_per_region) if spot else 0
    system = fleet.system_pool
    out = []
    for label, nodes in (("min", pool.min_nodes_per_region), ("max", pool.max_nodes_per_region)):
        on_demand_nodes = max(nodes, floor) if not spot else floor
        spot_nodes = max(0, max(nodes, floor) - floor) if spot else 0
        parts = [
            (pool.instance_type, on_demand_nodes, False),
            (pool.instance_type, spot_nodes, True),
        ]
        if system is not None:
            parts.append((system.instance_type, system.nodes_per_region, False))
        missing: list[str] = []
        hourly = 0.0
        priced = False
        for region in regions:
            for itype, count, at_spot in parts:
                if not count:
                    continue
                rate = table.rate(itype, region, at_spot)
                if rate is None:
                    missing.append(unpriced(itype, region, at_spot))
                else:
                    hourly += count * rate
                    priced = True
        total = (on_demand_nodes + spot_nodes) * len(regions)
        per_hour = round(hourly, 2) if priced else None
        out.append(
            FleetCost(
                label=label,
                gpu_nodes=total,
                spot_nodes=spot_nodes * len(regions),
                gpus=total * per_node,
                usd_per_hour=per_hour,
                usd_per_month=None
                if per_hour is None
                else round(per_hour * table.hours_per_month, 0),
                missing=tuple(missing),
            )
        )
    return out
