"""Racks above 40 kW cooled by air.

## What it does
Flags `compute.rack.kw_per_rack` above `max_air_kw` (40) with `cooling: air`.

## Why is this bad?
Air-cooled racks top out around 30 kW; an HGX H100 node alone draws up to 10.2 kW. Four
such nodes are a 40 kW rack. Above the
limit GPUs throttle, or the facility cannot host the rack at all.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
  rack:
    kw_per_rack: 41
    cooling: air
fabric: {kind: infiniband, gbps_per_node: 3200}
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
  rack:
    kw_per_rack: 41
    cooling: liquid
fabric: {kind: infiniband, gbps_per_node: 3200}
```

## References
- NVIDIA DGX H100 User Guide, hardware overview (about 10.2 kW per system):
  https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html
- NVIDIA GB200 NVL72, a liquid-cooled rack-scale system:
  https://www.nvidia.com/en-us/data-center/gb200-nvl72/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule
from archform.spec.models.training import TrainingCluster


class Fac001Options(Options):
    """Highest rack power for air cooling, kW."""

    max_air_kw: Annotated[float, Field(gt=0, le=500)] = 40.0


@rule(
    code="FAC001",
    name="rack-power-without-liquid-cooling",
    severity="warning",
    options=Fac001Options,
)
def check(ctx: RuleContext, options: Fac001Options) -> Iterator[Hit]:
    """kw_per_rack above max_air_kw with air cooling."""
    for doc, tc in ctx.documents(TrainingCluster):
        rack = tc.compute.rack
        if rack is not None and rack.cooling == "air" and rack.kw_per_rack > options.max_air_kw:
            yield Hit(
                doc,
                ("compute", "rack", "kw_per_rack"),
                f"{rack.kw_per_rack:g} kW per rack with air cooling; threshold: "
                f"{options.max_air_kw:g} kW for air (air-cooled racks top out around 30 kW)",
                "use liquid or rear-door cooling, or spread the nodes over more racks",
            )
