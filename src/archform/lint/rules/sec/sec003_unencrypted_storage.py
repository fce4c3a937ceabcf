"""Storage with encryption at rest disabled.

## What it does
Flags storage entries with `encrypted: false`.

## Why is this bad?
Datasets, checkpoints and model weights are the most valuable data a GPU platform holds.
Managed file systems and buckets encrypt at rest at no throughput cost; turning it off
only helps whoever gets the disks or the snapshots.

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
    mount: /fsx/ckpt
    encrypted: false
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
    mount: /fsx/ckpt
    encrypted: true
```

## References
- Amazon FSx for Lustre, encryption at rest:
  https://docs.aws.amazon.com/fsx/latest/LustreGuide/encryption-at-rest.html
- Amazon EBS encryption: https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption.html
- Amazon S3, default bucket encryption:
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/default-bucket-encryption.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


@rule(code="SEC003", name="unencrypted-storage", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """encrypted: false."""
    for doc, tc in ctx.documents(TrainingCluster):
        for i, store in enumerate(tc.storage):
            if not store.encrypted:
                size = "" if store.capacity_tib is None else f", {store.capacity_tib:g} TiB"
                yield Hit(
                    doc,
                    ("storage", i, "encrypted"),
                    f"storage {store.name!r} ({store.purpose}{size}) is not "
                    "encrypted at rest; expected encrypted: true",
                    "set encrypted: true",
                )
