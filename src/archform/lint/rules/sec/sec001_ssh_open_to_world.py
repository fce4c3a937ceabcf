"""SSH open to the whole internet.

## What it does
Flags `access.ssh_cidrs` when its ranges together admit more than a small share of the public
internet (default 0.1%, about a /10 of IPv4), per address family. The share is computed by
address arithmetic: overlapping ranges count once, and private, reserved and documentation
blocks (the IANA special-purpose registries) do not count as public. So `0.0.0.0/0`, `::/0`,
`[0.0.0.0/1, 128.0.0.0/1]` and `2000::/3` all fire; `10.0.0.0/8` or a corporate
`198.51.100.0/24`-sized public range does not. The finding points at the entry that admits
the most and names the covered share. Option: `max_public_percent`.

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
- IANA IPv4 Special-Purpose Address Registry:
  https://www.iana.org/assignments/iana-ipv4-special-registry/iana-ipv4-special-registry.xhtml
- IANA IPv6 Address Space (2000::/3 global unicast):
  https://www.iana.org/assignments/ipv6-address-space/ipv6-address-space.xhtml
- CIS Amazon Web Services Foundations Benchmark, "Ensure no security groups allow ingress
  from 0.0.0.0/0 (and from ::/0) to remote server administration ports":
  https://www.cisecurity.org/benchmark/amazon_web_services
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.exposure import open_ranges
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule
from archform.spec.models.training import TrainingCluster


class Sec001Options(Options):
    """Largest share of one family's public address space SSH may admit, in percent."""

    max_public_percent: float = Field(default=0.1, ge=0, le=100, allow_inf_nan=False)


@rule(code="SEC001", name="ssh-open-to-world", severity="error", options=Sec001Options)
def check(ctx: RuleContext, options: Sec001Options) -> Iterator[Hit]:
    """ssh_cidrs that together admit more than max_public_percent of the public internet."""
    for doc, tc in ctx.documents(TrainingCluster):
        cidrs = tc.access.ssh_cidrs
        for found in open_ranges(cidrs, options.max_public_percent):
            yield Hit(
                doc,
                ("access", "ssh_cidrs", found.index),
                f"SSH is open to {found.describe(options.max_public_percent)}; "
                "expected private or small allow-listed ranges",
                "list your VPN or bastion ranges, e.g. 10.0.0.0/8",
            )
