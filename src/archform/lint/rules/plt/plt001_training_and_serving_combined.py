"""A platform that serves on its training cluster.

## What it does
Flags a Platform whose `inference` names a TrainingCluster instead of an InferenceFleet.

## Why is this bad?
Training wants a fixed, tightly coupled, single-zone cluster run at full utilisation;
serving wants autoscaled, loosely coupled replicas in several regions. Sharing one
cluster means serving competes with training jobs for GPUs and maintenance windows
(training nodes need a parallel maintenance strategy, serving a rolling one).

## Example
```yaml
version: 1
kind: TrainingCluster
name: train
placement: {provider: aws, region: us-east-1}
compute: {nodes: 2, instance_type: p5.48xlarge}
---
version: 1
kind: Platform
name: demo
training: train
inference: train
registry: {provider: aws, region: us-east-1, bucket: corp-models}
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
- Slurm, maintenance reservations: https://slurm.schedmd.com/reservations.html
- Kubernetes, rolling updates:
  https://kubernetes.io/docs/tutorials/kubernetes-basics/update/update-intro/
- Kubernetes, Horizontal Pod Autoscaling:
  https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.platform import Platform
from archform.spec.models.training import TrainingCluster


@rule(code="PLT001", name="training-and-serving-combined", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Platform.inference names a TrainingCluster."""
    for doc, plat in ctx.documents(Platform):
        target = ctx.blueprints.by_name.get(plat.inference)
        if target is not None and isinstance(target.model, TrainingCluster):
            yield Hit(
                doc,
                ("inference",),
                f"inference {plat.inference!r} is a TrainingCluster: serving would share the "
                "training GPUs; expected an InferenceFleet",
                "describe the serving tier as its own InferenceFleet and name it here",
            )
