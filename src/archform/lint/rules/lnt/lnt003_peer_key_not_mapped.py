"""A key of another tool's file that archform does not map, reported once.

## What it does
When archform reads another tool's cluster file directly (an AWS ParallelCluster 3 config,
and the other formats of `archform.spec.peers`), it maps each key onto its blueprint model.
A key with no counterpart is reported here once, at its own line, with what archform does
instead: `info` for a key that is simply not checked, `warning` where the file cannot say
what archform needs to know (which Availability Zones a queue's several subnets are in).

## Why is this bad?
A linter that silently skips part of a file lets a reader believe that part was checked.
Naming every unmapped key says exactly what the findings cover, and what `archform import`
leaves out of the blueprint it writes.

## Example
```yaml
Region: us-east-1
Image:
  Os: alinux2
HeadNode:
  InstanceType: m6i.xlarge
  Networking: {SubnetId: subnet-0123456789abcdef0}
  Ssh: {AllowedIps: 10.0.0.0/8}
Scheduling:
  Scheduler: slurm
  SlurmQueues:
    - Name: cpu
      Networking: {SubnetIds: [subnet-0123456789abcdef0]}
      ComputeResources:
        - {Name: c6i, InstanceType: c6i.4xlarge, MinCount: 1, MaxCount: 1}
```

## Use instead
```yaml
Region: us-east-1
HeadNode:
  InstanceType: m6i.xlarge
  Networking: {SubnetId: subnet-0123456789abcdef0}
  Ssh: {AllowedIps: 10.0.0.0/8}
Scheduling:
  Scheduler: slurm
  SlurmQueues:
    - Name: cpu
      Networking: {SubnetIds: [subnet-0123456789abcdef0]}
      ComputeResources:
        - {Name: c6i, InstanceType: c6i.4xlarge, MinCount: 1, MaxCount: 1}
```

## References
- AWS ParallelCluster 3 cluster configuration file:
  https://docs.aws.amazon.com/parallelcluster/latest/ug/cluster-configuration-file-v3.html
- Ruff, rules that say what they did not check (noqa reporting):
  https://docs.astral.sh/ruff/linter/#error-suppression
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="LNT003", name="peer-key-not-mapped", severity="info")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Every note a peer reader recorded, once, at the peer key's position."""
    for doc in ctx.blueprints.documents:
        if doc.peer is None:
            continue
        for note in doc.peer.notes:
            yield Hit(
                doc,
                note.loc,
                f"{doc.peer.title}: {note.path}: {note.message}",
                "see what archform maps from this format: archform import FILE -o blueprint.yaml",
                severity=note.severity,
                value=note.path,
            )
