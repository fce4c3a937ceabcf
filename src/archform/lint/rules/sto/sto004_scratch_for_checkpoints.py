"""Checkpoints on a scratch (non-replicated) file system.

## What it does
Flags a storage entry with `purpose: checkpoints` that is `deployment: scratch` or
`kind: local_nvme`.

## Why is this bad?
Scratch file systems keep one copy: on FSx for Lustre SCRATCH_2 a failed server returns
I/O errors for its files, and node-local NVMe disappears with the node. The checkpoint is
exactly what a failure needs to be recoverable.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute:
  nodes: 4
  instance_type: p5.48xlarge
storage:
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 24
    deployment: scratch
    mount: /fsx/ckpt
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute:
  nodes: 4
  instance_type: p5.48xlarge
storage:
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 24
    deployment: persistent
    mount: /fsx/ckpt
```

## References
- Amazon FSx for Lustre, deployment types:
  https://docs.aws.amazon.com/fsx/latest/LustreGuide/using-fsx-lustre.html
- AWS CDK LustreDeploymentType (scratch: data is not replicated and does not persist on server
  failure):
  https://docs.aws.amazon.com/cdk/api/v2/python/aws_cdk.aws_fsx/LustreDeploymentType.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="STO004", name="scratch-for-checkpoints", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Checkpoints without replication."""
    for doc, tc in ctx.documents(TrainingCluster):
        for i, store in enumerate(tc.storage):
            if store.purpose != "checkpoints":
                continue
            if store.kind == "local_nvme":
                yield Hit(
                    doc,
                    ("storage", i, "kind"),
                    f"checkpoints {store.name!r} on node-local NVMe are lost with the node; "
                    "expected a replicated (persistent) shared file system",
                    "keep checkpoints on a persistent parallel file system",
                )
            elif store.deployment == "scratch":
                yield Hit(
                    doc,
                    ("storage", i, "deployment"),
                    f"checkpoints {store.name!r} on a scratch (non-replicated) file system; "
                    "expected deployment: persistent",
                    "set deployment: persistent (FSx PERSISTENT_2 or equivalent)",
                )
