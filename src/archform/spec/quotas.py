"""Provider quotas as data (data/quotas.yaml): default, how to raise it, source.

A blueprint that generates more of a thing than the provider allows by default validates
but fails at `pulumi up`, often halfway through; these checks find it at the blueprint line.
The SSH allow-list is the first: on AWS archform writes one ingress rule per `ssh_cidrs`
entry into the cluster's SSH security group (templates/pulumi/aws/network.py.j2).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data


@dataclass(frozen=True, slots=True)
class Quota:
    """One documented provider quota."""

    provider: str
    name: str
    what: str
    default: int
    adjustable: bool
    raise_how: str
    source: str

    def hint(self) -> str:
        """How to stay under it or raise it, with the source."""
        how = f"or raise it: {self.raise_how}" if self.adjustable else "it cannot be raised"
        return f"merge ranges into fewer, larger blocks, {how}; source: {self.source}"


@cache
def quotas() -> dict[tuple[str, str], Quota]:
    """Every quota by (provider, name)."""
    data: dict[str, Any] = load_data("quotas.yaml")
    return {
        (provider, name): Quota(
            provider,
            name,
            str(raw["what"]),
            int(raw["default"]),
            bool(raw["adjustable"]),
            " ".join(str(raw["raise"]).split()),
            str(raw["source"]),
        )
        for provider, entries in sorted(data.items())
        for name, raw in sorted(entries.items())
    }


def ssh_rule_overflow(provider: str, cidrs: list[str]) -> tuple[int, Quota, int] | None:
    """(index of the first entry over the quota, the quota, rules of that family) or None."""
    quota = quotas().get((provider, "security_group_inbound_rules"))
    if quota is None:
        return None
    seen = {4: 0, 6: 0}
    for index, cidr in enumerate(cidrs):
        family = ipaddress.ip_network(cidr, strict=False).version
        seen[family] += 1
        if seen[family] > quota.default:
            total = sum(1 for c in cidrs if ipaddress.ip_network(c, strict=False).version == family)
            return index, quota, total
    return None
