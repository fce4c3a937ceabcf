"""Training data read straight from object storage.

## What it does
Flags a storage entry with `purpose: training_data` and `kind: object` when the cluster has
no parallel file system or local NVMe cache for training data in front of it
(a `lustre`, `gpfs`, `weka` or `local_nvme` entry with `purpose: training_data`).

## Why is this bad?
Object stores have high per-request latency and per-prefix request limits (Amazon S3:
at least 5,500 GET/HEAD requests per second per partitioned prefix, scaled up over time
and answered with 503 Slow Down meanwhile); GPUs stall waiting for input. A Lustre file
system linked to the bucket (FSx data repository association, Managed Lustre import) or a
local cache keeps the bucket as the source of truth without reading it in the training loop.

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
  - name: data
    kind: object
    purpose: training_data
    capacity_tib: 100
    source: "s3://corp-data/train/"
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
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 24
    throughput_mbps_per_tib: 1000
    mount: /fsx/data
    source: "s3://corp-data/train/"
```

## References
- Amazon S3, performance guidelines (5,500 GET/HEAD requests per second per partitioned
  prefix): https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html
- AWS Knowledge Center, S3 503 Slow Down within the request rate per prefix:
  https://aws.amazon.com/premiumsupport/knowledge-center/s3-503-within-request-rate-prefix/
- Amazon FSx for Lustre, linking a file system to S3 (data repository association):
  https://docs.aws.amazon.com/fsx/latest/LustreGuide/create-dra-linked-data-repo.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule

CACHES = frozenset({"lustre", "gpfs", "weka", "local_nvme"})


@rule(code="STO002", name="object-storage-training-data", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Object storage for training data without a file system in front."""
    for doc, tc in ctx.training():
        cached = any(s.purpose == "training_data" and s.kind in CACHES for s in tc.storage)
        if cached:
            continue
        for i, store in enumerate(tc.storage):
            if store.purpose == "training_data" and store.kind == "object":
                yield Hit(
                    doc,
                    ("storage", i, "kind"),
                    f"training data {store.name!r} is read from object storage with no "
                    "parallel file system or local cache in front (every read is an HTTP "
                    "request; Amazon S3 serves at least 5,500 GET/HEAD requests per second per "
                    "partitioned prefix, and GPUs stall waiting for input beyond that)",
                    "add a lustre entry for training_data with `source:` set to the bucket",
                )
