"""Can the configured deployer path reach the API? Checked at the blueprint line.

`kubernetes.deployer` (models.inference.DeployerAccess) names how the machine running
`pulumi up` reaches each cluster's API. What can be decided from the blueprint alone is
checked here, so `validate` reports it at file:line:col before anything is created:

- a `network` must be of the provider's kind: a transit gateway id on AWS (regional, so one
  per region when the fleet has several: https://docs.aws.amazon.com/vpc/latest/tgw/
  how-transit-gateways-work.html), a virtual network resource id on Azure (VNet peering is
  global: https://learn.microsoft.com/azure/virtual-network/virtual-network-peering-overview),
  a Network Connectivity Center hub on GCP (global:
  https://cloud.google.com/network-connectivity/docs/network-connectivity-center/concepts/overview);
- through a network the deployer arrives from private addresses, which the private endpoint
  admits only when `api_access_cidrs` covers them;
- without a network the public endpoint is opened to `cidrs`, which must then be public and
  never the whole internet.

Whether the named network exists and routes back is what only the target can show.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from archform.spec.addresses import public_addresses
from archform.spec.paths import Loc
from archform.spec.provider import spec_of

Add = Callable[[Loc, str, str], None]


def _covered(cidr: str, ranges: list[str]) -> bool:
    net = ipaddress.ip_network(cidr, strict=False)
    return any(net.subnet_of(ipaddress.ip_network(r, strict=False)) for r in ranges)  # type: ignore[arg-type]


def check_deployer(add: Add, fleet: Any) -> None:
    """Report every way `kubernetes.deployer` cannot reach the API (`add(loc, msg, hint)`)."""
    deployer = fleet.kubernetes.deployer
    if deployer is None:
        return
    provider = fleet.placement.provider
    regions = list(fleet.placement.all_regions)
    where: Loc = ("kubernetes", "deployer")
    for i, cidr in enumerate(deployer.cidrs):
        if ipaddress.ip_network(cidr, strict=False).prefixlen == 0:
            add(
                (*where, "cidrs", i),
                f"{cidr} is the whole internet, not a deployer network",
                "name the deployer's own addresses",
            )
    if deployer.network is None:
        if not deployer.cidrs:
            add(
                where,
                "kubernetes.deployer names neither a network nor cidrs",
                "give network (connect the clusters to the deployer's network) or cidrs "
                "(open the public endpoint to the deployer's egress)",
            )
        for i, cidr in enumerate(deployer.cidrs):
            if public_addresses(cidr) == 0:
                add(
                    (*where, "cidrs", i),
                    f"{cidr} is private: without a network the deployer reaches the public "
                    "endpoint, which sees its public egress address",
                    "give the deployer's public egress CIDR, or the network it sits in",
                )
        return
    spec = spec_of(provider)
    if spec.deployer_network is None:
        add((*where, "network"), f"no deployer network hook on {provider}", "remove network")
        return
    form, example = spec.deployer_network
    network = deployer.network
    if isinstance(network, dict):
        if not spec.deployer_network_regional:
            add(
                (*where, "network"),
                f"a {provider} deployer network is global: give one id, not one per region",
                example,
            )
        missing = [r for r in regions if r not in network]
        extra = [r for r in network if r not in regions]
        if missing:
            add(
                (*where, "network"),
                f"no deployer network for {', '.join(missing)}",
                "transit gateways are regional: give one per region of the fleet",
            )
        if extra:
            add(
                (*where, "network"),
                f"{', '.join(extra)} is not a region of the fleet",
                "list only placement regions",
            )
        ids = {k: v for k, v in network.items()}
    else:
        if spec.deployer_network_regional and len(regions) > 1:
            add(
                (*where, "network"),
                "a transit gateway is regional; the fleet has several regions",
                "give network: {<region>: tgw-..., ...} for every region",
            )
        ids = {r: network for r in regions}
    for region, value in ids.items():
        if not form.fullmatch(value):
            loc = (*where, "network", region) if isinstance(network, dict) else (*where, "network")
            add(loc, f"{value!r} is not {example.split(',')[0]}", f"use {example}")
    if not deployer.cidrs:
        add(
            (*where, "cidrs"),
            "give the deployer's private addresses inside that network",
            "the API admits only kubernetes.api_access_cidrs; name the ranges pulumi runs from",
        )
    for i, cidr in enumerate(deployer.cidrs):
        if not _covered(cidr, list(fleet.kubernetes.api_access_cidrs)):
            add(
                (*where, "cidrs", i),
                f"{cidr} is outside kubernetes.api_access_cidrs "
                f"{list(fleet.kubernetes.api_access_cidrs)}: the private endpoint would refuse "
                "the deployer",
                "add the deployer's range to api_access_cidrs",
            )
