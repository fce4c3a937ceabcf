"""SSH open to the whole internet.

## What it does
Flags `access.ssh_cidrs` entries `0.0.0.0/0` or `::/0`.

## Why is this bad?
Login nodes of a GPU cluster are scanned and brute-forced within minutes of getting a
public address; a compromised login node reaches the shared file systems and every job's
data. Reach SSH through a VPN, a bastion or an identity-aware proxy.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric: {kind: ethernet, gbps_per_node: 100}
access:
  ssh_cidrs: [0.0.0.0/0]
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric: {kind: ethernet, gbps_per_node: 100}
access:
  ssh_cidrs: [10.0.0.0/8]
```

## References
- AWS Security Hub, EC2.13 security groups should not allow ingress from 0.0.0.0/0 to port 22:
  https://docs.aws.amazon.com/securityhub/latest/userguide/ec2-controls.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster

WORLD = frozenset({"0.0.0.0/0", "::/0"})


@rule(code="SEC001", name="ssh-open-to-world", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """0.0.0.0/0 or ::/0 in ssh_cidrs."""
    for doc, tc in ctx.documents(TrainingCluster):
        for i, cidr in enumerate(tc.access.ssh_cidrs):
            if cidr in WORLD:
                yield Hit(
                    doc,
                    ("access", "ssh_cidrs", i),
                    f"SSH is open to {cidr} (the whole internet); expected private ranges only",
                    "list your VPN or bastion ranges, e.g. 10.0.0.0/8",
                )
