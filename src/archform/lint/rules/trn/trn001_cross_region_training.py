"""A training cluster spans more than one region.

## What it does
Flags a TrainingCluster whose nodes are placed in more than one region
(`placement.regions` with two or more entries), or whose training-data storage sits in a
region the nodes are not in.

## Why is this bad?
Every training step ends with a gradient synchronisation across all GPUs. Between regions
the round trip is tens of milliseconds instead of microseconds inside one fabric, and the
inter-region links carry a fraction of a GPU node's 400-3,200 Gbps. Latency
between regions dominates gradient synchronisation. Training data read across regions
adds the same latency to every input batch, plus egress charges.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  regions: [us-east-1, us-west-2]
compute:
  nodes: 4
  instance_type: p5.48xlarge
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
compute:
  nodes: 4
  instance_type: p5.48xlarge
```

## References
- Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication Operations in
  MPICH", IJHPCA 19(1), 2005 (ring allreduce cost model)
- Amazon EC2, Regions and Availability Zones:
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-regions-availability-zones.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="TRN001", name="cross-region-training", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Nodes or training data in more than one region."""
    for doc, tc in ctx.training():
        regions = tc.placement.all_regions
        if len(regions) > 1:
            yield Hit(
                doc,
                ("placement", "regions"),
                f"training cluster spans {len(regions)} regions ({', '.join(regions)}); "
                "threshold: 1 region, because every step's gradient allreduce would cross "
                "inter-region links",
                f"keep every node in one region (region: {regions[0]}) and run a separate "
                "cluster per region if you need capacity elsewhere",
            )
        for i, store in enumerate(tc.storage):
            if store.purpose == "training_data" and store.region and store.region not in regions:
                yield Hit(
                    doc,
                    ("storage", i, "region"),
                    f"training data {store.name!r} is in {store.region} but the nodes are in "
                    f"{', '.join(regions)}; threshold: same region",
                    f"copy the dataset into {regions[0]} (or link a file system there to it)",
                )
