"""Resource footprint (nodes and GPUs per node group and region) and monthly cost.

Costs come from the dated price table `archform estimate` uses (estimate/prices.py). A
TrainingCluster costs nodes x hourly price x hours per month per node group, at the spot
price for spot groups and the on-demand list price otherwise (reservation and capacity-block
discounts are not modelled); controllers, login nodes and storage are not priced. A fleet
costs what `fleet_costs` says at its minimum and maximum size. On-prem groups have no price.
A cost sums what has a price in the document's region(s) and names the rest (``missing``).
"""

from __future__ import annotations

from dataclasses import dataclass

from archform.estimate.prices import PriceTable, fleet_costs, unpriced
from archform.spec.document import Model
from archform.spec.models.inference import InferenceFleet
from archform.spec.models.training import TrainingCluster


@dataclass(frozen=True, slots=True)
class Footprint:
    """Nodes and GPUs of one node group (or pool) in one region, as a min..max range."""

    document: str
    group: str
    region: str
    instance_type: str
    gpu_model: str
    nodes_min: int
    nodes_max: int
    gpus_min: int
    gpus_max: int

    @property
    def key(self) -> tuple[str, str, str]:
        """What a footprint is matched by across versions."""
        return (self.document, self.group, self.region)


@dataclass(frozen=True, slots=True)
class Cost:
    """Monthly cost of one document at one size (`label`: total, min or max)."""

    document: str
    label: str
    usd_per_month: float | None
    missing: tuple[str, ...]


def footprints(model: Model) -> list[Footprint]:
    """Every node group or pool of a document, per region."""
    if isinstance(model, TrainingCluster):
        region = model.placement.primary_region
        out = []
        for group in model.compute.groups:
            per = group.gpu.per_node if group.gpu else 0
            itype = group.instance_type or "on-prem"
            gpu = group.gpu.model if group.gpu else "-"
            out.append(
                Footprint(
                    model.name,
                    group.name,
                    region,
                    itype,
                    gpu,
                    group.nodes,
                    group.nodes,
                    group.nodes * per,
                    group.nodes * per,
                )
            )
        return out
    if isinstance(model, InferenceFleet):
        pool = model.gpu_pool
        per = pool.gpu.per_node if pool.gpu else 0
        gpu = pool.gpu.model if pool.gpu else "-"
        out = []
        for region in model.placement.all_regions:
            low = max(pool.min_nodes_per_region, _floor(model))
            high = max(pool.max_nodes_per_region, _floor(model))
            out.append(
                Footprint(
                    model.name,
                    "gpu_pool",
                    region,
                    pool.instance_type,
                    gpu,
                    low,
                    high,
                    low * per,
                    high * per,
                )
            )
            if model.system_pool is not None:
                n = model.system_pool.nodes_per_region
                out.append(
                    Footprint(
                        model.name,
                        "system_pool",
                        region,
                        model.system_pool.instance_type,
                        "-",
                        n,
                        n,
                        0,
                        0,
                    )
                )
        return out
    return []


def _floor(fleet: InferenceFleet) -> int:
    pool = fleet.gpu_pool
    if pool.purchase != "spot":
        return 0
    return min(pool.on_demand_floor_per_region, pool.max_nodes_per_region)


def costs(model: Model, table: PriceTable) -> list[Cost]:
    """Monthly cost of a document (one row; a fleet has a min and a max row)."""
    if isinstance(model, TrainingCluster):
        total = 0.0
        missing: list[str] = []
        priced = False
        region = model.placement.primary_region
        for group in model.compute.groups:
            if group.instance_type is None:
                missing.append(f"{group.name}: on-prem")
                continue
            spot = group.purchase == "spot"
            rate = table.rate(group.instance_type, region, spot)
            if rate is None:
                missing.append(unpriced(group.instance_type, region, spot))
                continue
            total += group.nodes * rate * table.hours_per_month
            priced = True
        value = round(total, 0) if priced else None
        return [Cost(model.name, "total", value, tuple(missing))]
    if isinstance(model, InferenceFleet):
        return [
            Cost(model.name, c.label, c.usd_per_month, c.missing) for c in fleet_costs(model, table)
        ]
    return []
