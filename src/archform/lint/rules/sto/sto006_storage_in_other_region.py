"""Storage, or an inference model's weights, in another region than its readers.

## What it does
Flags a TrainingCluster storage entry (other than training data, which TRN001 reports)
whose `region` is not one of the cluster's regions, and an InferenceFleet whose
`model.source_region` is outside all of its serving regions while
`model.replicate_to_regions` is false.

## Why is this bad?
Every read crosses regions: tens of milliseconds per request instead of sub-millisecond,
a fraction of the bandwidth, and egress charges per byte.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute:
  nodes: 2
  instance_type: p5.48xlarge
storage:
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 24
    region: us-west-2
    mount: /fsx/ckpt
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute:
  nodes: 2
  instance_type: p5.48xlarge
storage:
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 24
    region: us-east-1
    mount: /fsx/ckpt
```

## References
- Amazon S3 pricing, data transfer between regions: https://aws.amazon.com/s3/pricing/
- KServe issue 3869 (weights from another region): https://github.com/kserve/kserve/issues/3869
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="STO006", name="storage-in-other-region", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Storage or model source outside the compute's regions."""
    for doc, tc in ctx.documents(TrainingCluster):
        regions = tc.placement.all_regions
        for i, store in enumerate(tc.storage):
            if store.purpose == "training_data" or not store.region or store.region in regions:
                continue
            yield Hit(
                doc,
                ("storage", i, "region"),
                f"storage {store.name!r} ({store.purpose}) is in {store.region}, the nodes in "
                f"{', '.join(regions)}; expected the same region",
                f"create {store.name!r} in {regions[0]}",
            )
    for doc, fleet in ctx.fleets():
        model = fleet.model
        regions = fleet.placement.all_regions
        source = model.source_region
        if source and source not in regions and not model.replicate_to_regions:
            yield Hit(
                doc,
                ("model", "source_region"),
                f"weights are in {source}, the fleet serves from {', '.join(regions)}, and "
                "replicate_to_regions is false: every pod start reads them across regions",
                "set model.replicate_to_regions: true, or move the weights into a serving region",
            )
