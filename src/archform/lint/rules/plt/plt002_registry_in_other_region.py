"""The model registry is in another region than training.

## What it does
Flags a Platform whose `registry.region` differs from the region of the TrainingCluster
named by `training`.

## Why is this bad?
Every promotion copies a checkpoint (hundreds of GB for a 70B model) from the training
region to the registry across regions: slower promotions and egress on every copy. Keep
the registry beside training and replicate to serving regions from there.

## Example
```yaml
version: 1
kind: TrainingCluster
name: train
placement: {provider: aws, region: us-east-1}
compute: {nodes: 2, instance_type: p5.48xlarge}
---
version: 1
kind: InferenceFleet
name: serve
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://corp-models/llama-3.1-8b/v1/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
---
version: 1
kind: Platform
name: demo
training: train
inference: serve
registry: {provider: aws, region: eu-west-2, bucket: corp-models}
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: train
placement: {provider: aws, region: us-east-1}
compute: {nodes: 2, instance_type: p5.48xlarge}
---
version: 1
kind: InferenceFleet
name: serve
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://corp-models/llama-3.1-8b/v1/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
---
version: 1
kind: Platform
name: demo
training: train
inference: serve
registry: {provider: aws, region: us-east-1, bucket: corp-models}
```

## References
- Amazon S3 pricing, data transfer between regions: https://aws.amazon.com/s3/pricing/
- Amazon S3, replicating objects across regions:
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/replication.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.platform import Platform
from archform.spec.models.training import TrainingCluster


@rule(code="PLT002", name="registry-in-other-region", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """registry.region != training region."""
    for doc, plat in ctx.documents(Platform):
        target = ctx.blueprints.by_name.get(plat.training)
        if target is None or not isinstance(target.model, TrainingCluster):
            continue
        regions = target.model.placement.all_regions
        if plat.registry.region not in regions:
            yield Hit(
                doc,
                ("registry", "region"),
                f"registry is in {plat.registry.region}, training {plat.training!r} in "
                f"{', '.join(regions)}; every promotion copies weights across regions",
                f"put the registry bucket in {regions[0]}",
            )
