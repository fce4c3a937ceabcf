"""Provider quotas as data (data/quotas.yaml): default, how to raise it, source.

A blueprint that generates more of a thing than the provider allows by default validates
but fails at `pulumi up`, often halfway through; these checks find it at the blueprint line.
Each check counts what archform's generated program creates for the blueprint (the template
that creates it is named beside each count) and reports the first field over a quota.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from archform.spec.addresses import public_addresses
from archform.spec.datafile import load_data
from archform.spec.paths import Loc
from archform.spec.provider import spec_of, spec_or_none
from archform.spec.rollout import MAX_SURGE_PERCENT, fleet_headroom_nodes

if TYPE_CHECKING:  # the checks read these models; the data needs none
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster


def _vendor(provider: str) -> str:
    """Who sets the provider's quotas, as its documentation names itself."""
    spec = spec_or_none(provider)
    return spec.vendor if spec is not None else provider


@dataclass(frozen=True, slots=True)
class Quota:
    """One documented provider quota."""

    provider: str
    name: str
    quota: str  # the provider's own name for it
    code: str | None  # the provider's quota code, where it has one (AWS Service Quotas)
    what: str
    default: int
    adjustable: bool
    raise_how: str
    fix: str
    source: str

    def hint(self) -> str:
        """How to stay under it or raise it, with the source."""
        how = f", or raise it: {self.raise_how}" if self.adjustable else f"; {self.raise_how}"
        return f"{self.fix}{how}; source: {self.source}"

    def allows(self, raised: int | None = None) -> str:
        """`AWS allows 60 inbound rules per ... by default` (or the account's raised value)."""
        if raised is not None:
            return (
                f"the account's raised quota (placement.quotas.{self.name}) allows "
                f"{raised:,} {self.what}"
            )
        return f"{_vendor(self.provider)} allows {self.default:,} {self.what} by default"


@dataclass(frozen=True, slots=True)
class Over:
    """A field of the blueprint that makes the generated program exceed one quota."""

    loc: Loc
    quota: Quota
    count: int
    found: str  # what the blueprint makes archform create, e.g. "61 SSH ranges of IPv4 ..."
    raised: int | None = None  # the blueprint's placement.quotas value, when it gives one

    def message(self) -> str:
        """What is over, and what the quota allows."""
        return f"{self.found}; {self.quota.allows(self.raised)}"

    def hint(self) -> str:
        """How to stay under it; for an adjustable quota, how to raise it and declare that."""
        hint = self.quota.hint()
        if self.quota.adjustable:
            hint += f"; once raised, give the new value as placement.quotas.{self.quota.name}"
        return hint


def _text(raw: Any) -> str:
    return " ".join(str(raw).split())


@cache
def quotas() -> dict[tuple[str, str], Quota]:
    """Every quota by (provider, name)."""
    data: dict[str, Any] = load_data("quotas.yaml")
    return {
        (provider, name): Quota(
            provider,
            name,
            _text(raw["quota"]),
            None if raw.get("code") is None else str(raw["code"]),
            _text(raw["what"]),
            int(raw["default"]),
            bool(raw["adjustable"]),
            _text(raw["raise"]),
            _text(raw["fix"]),
            str(raw["source"]),
        )
        for provider, entries in sorted(data.items())
        for name, raw in sorted(entries.items())
    }


def _quota(provider: str, name: str) -> Quota | None:
    return quotas().get((provider, name))


def provider_quotas(provider: str) -> list[Quota]:
    """The provider's quotas, by name."""
    return [q for (p, _), q in sorted(quotas().items()) if p == provider]


def raised_problems(provider: str, raised: dict[str, int]) -> list[tuple[str, str, str]]:
    """(quota name, what is wrong, hint) for each placement.quotas entry archform cannot use.

    A name must be one of the provider's quotas and the quota adjustable (a fixed limit
    cannot be declared away).
    """
    known = {q.name: q for q in provider_quotas(provider)}
    out: list[tuple[str, str, str]] = []
    for name in raised:
        quota = known.get(name)
        if quota is None:
            names = ", ".join(sorted(known)) or "none"
            out.append(
                (
                    name,
                    f"{name!r} is not a {_vendor(provider)} quota archform checks",
                    f"the quota names for {provider} are: {names}",
                )
            )
        elif not quota.adjustable:
            out.append(
                (
                    name,
                    f"{quota.quota} ({quota.default:,}) cannot be raised: {quota.raise_how}",
                    f"remove it; {quota.fix}; source: {quota.source}",
                )
            )
    return out


def _limit(quota: Quota, raised: dict[str, int]) -> tuple[int, int | None]:
    """(the limit that applies, the declared raised value or None)."""
    value = raised.get(quota.name) if quota.adjustable else None
    return (quota.default, None) if value is None else (value, value)


def _first_over(
    quota: Quota | None,
    items: list[tuple[Loc, int]],
    found: str,
    raised: dict[str, int],
    reserved: int = 0,
) -> Iterator[Over]:
    """Count `items` (where, how many each adds) and yield the first that passes the quota.

    `reserved`: what the provider itself puts there first (EKS's own inbound rule).
    """
    if quota is None:
        return
    limit, declared = _limit(quota, raised)
    total = reserved + sum(n for _, n in items)
    if total <= limit:
        return
    running = reserved
    for loc, n in items:
        running += n
        if running > limit:
            yield Over(loc, quota, total, found.format(total=f"{total:,}"), declared)
            return


def ssh_rule_overflow(
    provider: str, cidrs: list[str], raised: dict[str, int] | None = None
) -> tuple[int, Quota, int] | None:
    """(index of the first entry over the quota, the quota, rules of that family) or None."""
    quota = _quota(provider, "security_group_inbound_rules")
    if quota is None:
        return None
    limit, _ = _limit(quota, raised or {})
    seen = {4: 0, 6: 0}
    for index, cidr in enumerate(cidrs):
        family = ipaddress.ip_network(cidr, strict=False).version
        seen[family] += 1
        if seen[family] > limit:
            total = sum(1 for c in cidrs if ipaddress.ip_network(c, strict=False).version == family)
            return index, quota, total
    return None


def training_overs(cluster: TrainingCluster) -> list[Over]:
    """Quotas a training cluster's generated program exceeds, first field over each."""
    provider = cluster.placement.provider
    raised = dict(cluster.placement.quotas)
    cidrs = list(cluster.access.ssh_cidrs)
    out: list[Over] = []
    over = ssh_rule_overflow(provider, cidrs, raised)
    if over is not None:
        index, quota, total = over
        # providers/aws/templates/pulumi/network.py: one ingress rule per ssh_cidrs entry, one
        # group.
        out.append(
            Over(
                ("access", "ssh_cidrs", index),
                quota,
                total,
                f"{total} SSH ranges of one address family become {total} rules in one "
                "security group",
                _limit(quota, raised)[1],
            )
        )
    # providers/azure/templates/pulumi/network.py: one NSG rule whose source_address_prefixes are
    # every ssh_cidrs entry.
    out += _first_over(
        _quota(provider, "nsg_source_addresses"),
        [(("access", "ssh_cidrs", i), 1) for i in range(len(cidrs))],
        "{total} SSH ranges become the source addresses of one network security group",
        raised,
    )
    return out


def api_public_cidrs(fleet: InferenceFleet) -> list[str]:
    """The blueprint's API ranges the public endpoint admits (render.fleet: api_public_cidrs).

    Empty when every range is private (the endpoint is then private); otherwise the ranges
    that admit a public address.
    """
    cidrs = list(fleet.kubernetes.api_access_cidrs)
    if all(public_addresses(c) == 0 for c in cidrs):
        return []
    return [c for c in cidrs if public_addresses(c) > 0]


def _public_endpoint_items(fleet: InferenceFleet) -> list[tuple[Loc, int]]:
    """Each range the public API endpoint lists, where it is written.

    The fleet programs pass api_public_cidrs plus, when kubernetes.deployer has no network,
    the deployer's public egress CIDRs (providers/{aws,azure}/templates/fleet/__main__.py.j2,
    PUBLIC_CIDRS). Stack config can add more at deploy time; those are not counted here.
    """
    public = set(api_public_cidrs(fleet))
    items: list[tuple[Loc, int]] = [
        (("kubernetes", "api_access_cidrs", i), 1)
        for i, c in enumerate(fleet.kubernetes.api_access_cidrs)
        if c in public
    ]
    dep = fleet.kubernetes.deployer
    if dep is not None and dep.network is None:
        items += [(("kubernetes", "deployer", "cidrs", i), 1) for i in range(len(dep.cidrs))]
    return items


# Every fleet program lets the system pool grow 2 nodes past system_pool.nodes_per_region
# (providers/<name>/templates/fleet/__main__.py.j2: `["nodes"] + 2`).
SYSTEM_POOL_HEADROOM = 2


@dataclass(frozen=True, slots=True)
class PoolSize:
    """One node pool of a region's cluster: its most nodes, and the field that sets it."""

    loc: Loc
    max_nodes: int
    what: str
    headroom: int = 0  # nodes of max_nodes that are the rollout headroom (spec.rollout)


def node_pools(fleet: InferenceFleet) -> list[PoolSize]:
    """The node pools each region's cluster gets, the system pool first.

    As render.fleet.view `_pools` builds them: a spot GPU pool splits into an on-demand
    floor pool and a spot pool above it, and the pool the autoscaler grows may add the
    nodes a rollout's surge pods need at the maximum (spec.rollout.headroom_nodes).
    """
    pool = fleet.gpu_pool
    spot = pool.purchase == "spot"
    floor = min(pool.on_demand_floor_per_region, pool.max_nodes_per_region) if spot else 0
    nodes = fleet.system_pool.nodes_per_region if fleet.system_pool else 2
    system_loc: Loc = ("system_pool", "nodes_per_region") if fleet.system_pool else ("gpu_pool",)
    out = [PoolSize(system_loc, nodes + SYSTEM_POOL_HEADROOM, "the system pool")]
    if floor:
        out.append(
            PoolSize(("gpu_pool", "on_demand_floor_per_region"), floor, "the on-demand GPU pool")
        )
    # the pool the autoscaler grows carries the rollout headroom (spec.rollout)
    headroom = fleet_headroom_nodes(fleet)
    out.append(
        PoolSize(
            ("gpu_pool", "max_nodes_per_region"),
            pool.max_nodes_per_region - floor + headroom,
            "the spot GPU pool" if spot else "the GPU pool",
            headroom,
        )
    )
    return out


def fleet_overs(fleet: InferenceFleet) -> list[Over]:
    """Quotas each region's generated cluster exceeds, first field over each."""
    provider = fleet.placement.provider
    raised = dict(fleet.placement.quotas)
    out: list[Over] = []
    out += _first_over(
        _quota(provider, "kubernetes_api_public_cidrs"),
        _public_endpoint_items(fleet),
        "{total} ranges on the public Kubernetes API endpoint of each cluster",
        raised,
    )
    dep = fleet.kubernetes.deployer
    # providers/gcp/templates/fleet/__main__.py.j2: master_authorized_networks_config lists every
    # api_access_cidrs entry, then the deployer's public egress CIDRs.
    out += _first_over(
        _quota(provider, "authorized_networks"),
        [
            (("kubernetes", "api_access_cidrs", i), 1)
            for i in range(len(fleet.kubernetes.api_access_cidrs))
        ]
        + (
            [(("kubernetes", "deployer", "cidrs", i), 1) for i in range(len(dep.cidrs))]
            if dep is not None and dep.network is None
            else []
        ),
        "{total} authorized networks on each GKE control plane",
        raised,
    )
    if spec_of(provider).api_access_rules_in_security_group:
        # providers/aws/templates/fleet/__main__.py.j2: one HTTPS ingress rule per
        # api_access_cidrs entry in the EKS cluster security group, which holds EKS's own
        # inbound rule (all traffic from itself) from creation (EKS user guide, "Default
        # cluster security group").
        out += _first_over(
            _quota(provider, "security_group_inbound_rules"),
            [
                (("kubernetes", "api_access_cidrs", i), 1)
                for i in range(len(fleet.kubernetes.api_access_cidrs))
            ],
            "{total} inbound rules in each EKS cluster security group (one per "
            "api_access_cidrs entry and EKS's own rule)",
            raised,
            reserved=1,
        )
    per_pool = _quota(provider, "nodes_per_node_pool")
    if per_pool is not None:
        # each pool is one EKS managed node group / AKS agent pool per region, its maximum
        # the pool's max_size / max_count
        limit, declared = _limit(per_pool, raised)
        out += [
            Over(
                size.loc,
                per_pool,
                size.max_nodes,
                f"{size.what} of each region grows to {size.max_nodes:,} nodes"
                + (
                    f" ({size.headroom:,} of them for a rollout's surge pods at the maximum, "
                    f"maxSurge {MAX_SURGE_PERCENT}%)"
                    if size.headroom
                    else ""
                ),
                declared,
            )
            for size in node_pools(fleet)
            if size.max_nodes > limit
        ]
    return out
