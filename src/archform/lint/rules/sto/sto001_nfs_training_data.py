"""Training data served from NFS.

## What it does
Flags a storage entry with `purpose: training_data` and `kind: nfs`.

## Why is this bad?
One NFS server (or a filer's few heads) feeds every GPU: throughput does not grow with
the cluster, metadata operations serialise, and every data-loader worker on every node
hits the same mount. ParallelCluster users report NFS slowdowns beyond about five nodes.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - name: data
    kind: nfs
    purpose: training_data
    capacity_tib: 100
    mount: /data
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
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 100
    throughput_mbps_per_tib: 500
    mount: /data
```

## References
- Amazon FSx for Lustre performance (throughput scales with storage capacity):
  https://docs.aws.amazon.com/fsx/latest/LustreGuide/performance.html
- Lustre striping best practices: https://wiki.lustre.org/Lustre_Striping_Best_Practices
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="STO001", name="nfs-training-data", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Kind nfs for training data."""
    for doc, tc in ctx.training():
        for i, store in enumerate(tc.storage):
            if store.purpose == "training_data" and store.kind == "nfs":
                yield Hit(
                    doc,
                    ("storage", i, "kind"),
                    f"training data {store.name!r} is on NFS, read by "
                    f"{tc.compute.total_gpus} GPUs on {tc.compute.total_nodes} nodes; expected "
                    "a parallel file system (lustre, gpfs, weka)",
                    "move the dataset to Lustre (or another parallel file system) sized at "
                    ">= 1 GB/s per 8 GPUs",
                )
