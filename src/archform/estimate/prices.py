"""Dated instance prices (spec/data/prices.yaml) and the monthly cost of a fleet.

Cost model: GPU pools at their purchase option per node (spot pools at the spot price, the
on-demand floor and on-demand/reserved pools at the on-demand list price; reservations'
discounts are not modelled), plus the system pool on-demand, times 730 hours per month.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data
from archform.spec.models.inference import InferenceFleet


@dataclass(frozen=True, slots=True)
class Price:
    """USD per hour of one instance type."""

    instance: str
    provider: str
    on_demand: float
    spot: float | None


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The whole table with its date and regional basis."""

    as_of: dt.date
    verified: bool
    regions: dict[str, str]
    hours_per_month: int
    prices: dict[str, Price]

    def get(self, instance: str) -> Price | None:
        """The price of an instance type, or None when the table has none."""
        return self.prices.get(instance)


@cache
def load_prices() -> PriceTable:
    """Load the bundled table once."""
    data: dict[str, Any] = load_data("prices.yaml")
    prices = {
        name: Price(
            name,
            str(row["provider"]),
            float(row["on_demand"]),
            None if row.get("spot") is None else float(row["spot"]),
        )
        for name, row in sorted(data["instances"].items())
    }
    as_of = data["as_of"]
    return PriceTable(
        as_of=as_of if isinstance(as_of, dt.date) else dt.date.fromisoformat(str(as_of)),
        verified=bool(data["verified"]),
        regions={str(k): str(v) for k, v in data["regions"].items()},
        hours_per_month=int(data["hours_per_month"]),
        prices=prices,
    )


@dataclass(frozen=True, slots=True)
class FleetCost:
    """GPUs and monthly cost at one fleet size (all regions)."""

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
    regions = len(fleet.placement.all_regions)
    per_node = pool.gpu.per_node if pool.gpu else 1
    spot = pool.purchase == "spot"
    floor = min(pool.on_demand_floor_per_region, pool.max_nodes_per_region) if spot else 0
    gpu_price = table.get(pool.instance_type)
    system = fleet.system_pool
    sys_price = table.get(system.instance_type) if system else None
    out = []
    for label, nodes in (("min", pool.min_nodes_per_region), ("max", pool.max_nodes_per_region)):
        on_demand_nodes = max(nodes, floor) if not spot else floor
        spot_nodes = max(0, max(nodes, floor) - floor) if spot else 0
        missing: list[str] = []
        hourly = 0.0
        if gpu_price is None:
            missing.append(pool.instance_type)
        else:
            spot_rate = gpu_price.spot
            if spot_nodes and spot_rate is None:
                missing.append(f"{pool.instance_type} (spot)")
            hourly += on_demand_nodes * gpu_price.on_demand + spot_nodes * (spot_rate or 0.0)
        if system is not None:
            if sys_price is None:
                missing.append(system.instance_type)
            else:
                hourly += system.nodes_per_region * sys_price.on_demand
        total = (on_demand_nodes + spot_nodes) * regions
        per_hour = None if missing else round(hourly * regions, 2)
        out.append(
            FleetCost(
                label=label,
                gpu_nodes=total,
                spot_nodes=spot_nodes * regions,
                gpus=total * per_node,
                usd_per_hour=per_hour,
                usd_per_month=None
                if per_hour is None
                else round(per_hour * table.hours_per_month, 0),
                missing=tuple(missing),
            )
        )
    return out
