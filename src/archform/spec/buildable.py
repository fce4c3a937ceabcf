"""What archform can build: a validated document checked against its target's limits.

Every limit that would stop `archform generate` is checked here, at load time, so validate,
lint and generate agree and the user hears it at file:line:col with a hint. The renderers
trust these checks: they never refuse a document that loaded.

Provider facts (Lustre tiers, scale-set size) come from the catalog (data/catalog.yaml).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from archform.spec.catalog import Catalog, load_catalog
from archform.spec.deployer import check_deployer
from archform.spec.engines import engine, kinds
from archform.spec.errors import SpecProblem
from archform.spec.networks import (
    Block,
    SizeProblem,
    fleet_blocks,
    fleet_size_problems,
    gpu_network,
    overlapping,
    training_blocks,
    training_size_problems,
)
from archform.spec.paths import Loc, format_path
from archform.spec.quotas import Over, fleet_overs, raised_problems, training_overs
from archform.spec.release import split_source
from archform.spec.source import SourceMap
from archform.spec.source_access import check_source_account

if TYPE_CHECKING:  # checked by `kind` below: lint imports only the models it reads
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster

CLOUDS = ("aws", "gcp", "azure")
# Providers of the model registry archform generates (render/targets/platform/target.py).
REGISTRY_PROVIDERS = ("aws", "gcp")
# Subnets each Pulumi training target carves out of placement.network.cidr, and the host
# numbers it assigns in the first of them (controller .10, login .11-.26, compute from .32).
SUBNETS = {"aws": 4, "gcp": 2, "azure": 4}
CONTROLLER_HOST = 10
FIRST_LOGIN_HOST = 11
FIRST_COMPUTE_HOST = 32  # GCP: static compute addresses
# Smallest subnet the targets carve (AWS VPC subnets: /28 at most, EC2 user guide).
MAX_SUBNET_PREFIX = 28


class _Checker:
    def __init__(self, file: str, source: SourceMap) -> None:
        self.file = file
        self.source = source
        self.problems: list[SpecProblem] = []

    def add(self, loc: Loc, message: str, hint: str, prefer: str = "value") -> None:
        pos = self.source.locate(loc, prefer=prefer)
        path = format_path(loc)
        text = f"{path}: {message}" if path else message
        self.problems.append(SpecProblem(self.file, pos.line, pos.column, text, hint, path))

    def written(self, loc: Loc) -> tuple[int, ...]:
        """Sort key: (0,) for a field left at its default, else (1, line, column)."""
        pos = self.source.keys.get(tuple(loc)) or self.source.values.get(tuple(loc))
        return (0,) if pos is None else (1, pos.line, pos.column)


def check_buildable(file: str, source: SourceMap, model: Any) -> list[SpecProblem]:
    """Problems that would stop generation of one validated document."""
    checker = _Checker(file, source)
    catalog = load_catalog()
    kind = model.kind
    if kind == "TrainingCluster":
        _extensions(checker, file, model)
    if kind == "TrainingCluster" and model.placement.provider in CLOUDS:
        _training(checker, catalog, model)
    elif kind == "InferenceFleet":
        _fleet(checker, catalog, model)
    elif kind == "Platform" and model.registry.provider not in REGISTRY_PROVIDERS:
        checker.add(
            ("registry", "provider"),
            f"archform does not generate a model registry on {model.registry.provider} yet",
            f"put the registry on {' or '.join(REGISTRY_PROVIDERS)}",
        )
    return checker.problems


def _extensions(checker: _Checker, file: str, cluster: TrainingCluster) -> None:
    """The team's extension folders exist and hold what archform can include."""
    from archform.spec import extensions as ext

    given = cluster.extensions
    checks: list[tuple[str, str, Any]] = []
    if given.ansible is not None:
        checks.append(("ansible", given.ansible, ext.ansible_tasks))
    if given.pulumi is not None:
        if cluster.placement.provider not in CLOUDS:
            checker.add(
                ("extensions", "pulumi"),
                "an on-prem cluster has no Pulumi program to extend",
                "remove extensions.pulumi",
            )
        else:
            checks.append(("pulumi", given.pulumi, ext.pulumi_package))
    for key, rel, read in checks:
        try:
            read(file, rel)
        except ext.ExtensionError as exc:
            checker.add(("extensions", key), str(exc), exc.hint)
        except OSError as exc:
            checker.add(("extensions", key), f"cannot read {rel}: {exc.strerror}", "fix the path")


def group_loc(cluster: TrainingCluster, index: int) -> Loc:
    """Where node group `index` (0: the compute block itself) is written."""
    return ("compute",) if index == 0 else ("compute", "extra_groups", index - 1)


def _training(checker: _Checker, catalog: Catalog, cluster: TrainingCluster) -> None:
    provider = cluster.placement.provider
    _quotas(
        checker,
        cluster.placement.provider,
        dict(cluster.placement.quotas),
        training_overs(cluster),
    )
    for i, group in enumerate(cluster.compute.groups):
        if group.instance_type is None:
            example = {
                "aws": "p5.48xlarge",
                "gcp": "a3-megagpu-8g",
                "azure": "Standard_ND96isr_H100_v5",
            }[provider]
            checker.add(
                group_loc(cluster, i),
                f"node group {group.name!r} has no instance_type",
                f"cloud clusters need instance_type, e.g. {example}",
                prefer="key",
            )
    _network(checker, cluster)
    _ranges(
        checker, training_size_problems(cluster, catalog), lambda: training_blocks(cluster, catalog)
    )
    _lustre(checker, catalog, cluster)
    if provider == "azure":
        limit = catalog.limits.azure_scale_set_max_vms
        for i, group in enumerate(cluster.compute.groups):
            if group.capacity_reservation_id:
                # Uniform scale sets join a capacity reservation group only with
                # singlePlacementGroup=false, and InfiniBand needs a single placement group.
                # https://learn.microsoft.com/en-us/azure/virtual-machines/capacity-reservation-associate-virtual-machine-scale-set
                checker.add(
                    (*group_loc(cluster, i), "capacity_reservation_id"),
                    f"node group {group.name!r}: an Azure capacity reservation group cannot "
                    "hold an InfiniBand scale set (it needs singlePlacementGroup=false)",
                    "remove capacity_reservation_id; `purchase: reserved` on Azure means "
                    "Reserved VM Instances, a billing discount applied without any id",
                    prefer="key",
                )
            if group.nodes > limit:
                checker.add(
                    (*group_loc(cluster, i), "nodes"),
                    f"{group.nodes} nodes in one Azure scale set; a scale set with a single "
                    f"placement group (one InfiniBand domain) holds at most {limit}",
                    f"split the nodes into extra_groups of at most {limit} nodes each",
                )
    if provider == "gcp":
        _gcp_layouts(checker, catalog, cluster)
    _filestore(checker, cluster)


def _quotas(checker: _Checker, provider: str, raised: dict[str, int], overs: list[Over]) -> None:
    """One error per exceeded quota and per unusable placement.quotas entry.

    Each quota error is at the first field over it (spec/quotas.py); a placement.quotas
    entry must name an adjustable quota of the provider.
    """
    for name, problem, hint in raised_problems(provider, raised):
        checker.add(("placement", "quotas", name), problem, hint)
    for over in overs:
        checker.add(over.loc, over.message(), over.hint())


def _filestore(checker: _Checker, cluster: TrainingCluster) -> None:
    """filestore_tier only on GCP; the size inside the tier's range (data/filestore.yaml)."""
    from archform.spec.filestore import check_capacity, filestore

    provider = cluster.placement.provider
    for i, storage in enumerate(cluster.storage):
        if storage.kind != "nfs" or storage.filestore_tier is None:
            continue
        if provider != "gcp":
            checker.add(
                ("storage", i, "filestore_tier"),
                f"filestore_tier is a Google Cloud Filestore setting; the cluster is on {provider}",
                "remove filestore_tier",
            )
            continue
        problem = check_capacity(storage.filestore_tier, storage.size_tib)
        if problem is not None:
            checker.add(
                ("storage", i, "capacity_tib"),
                problem,
                f"give a capacity_tib inside the tier's range ({filestore().source})",
            )


def _network(checker: _Checker, cluster: TrainingCluster) -> None:
    provider = cluster.placement.provider
    net = cluster.placement.network
    if net.existing_vpc_id and provider in ("gcp", "azure"):
        why = {
            "gcp": "GPU clusters need their own system and GPU VPCs",
            "azure": "archform creates the VNet of Azure clusters",
        }[provider]
        checker.add(
            ("placement", "network", "existing_vpc_id"),
            f"reusing an existing network is not supported on {provider}",
            f"{why}; remove placement.network.existing_*",
            prefer="key",
        )
    if net.existing_vpc_id and provider == "aws" and not net.existing_subnet_ids:
        checker.add(
            ("placement", "network", "existing_vpc_id"),
            "existing_vpc_id needs existing_subnet_ids",
            "list the private subnet id(s) in the cluster's zone as existing_subnet_ids",
            prefer="key",
        )
    cidr = ipaddress.ip_network(net.cidr)
    loc = ("placement", "network", "cidr")
    if cidr.version != 4:
        checker.add(loc, f"{net.cidr} is not an IPv4 block", "use an IPv4 block, e.g. 10.42.0.0/16")
        return
    bits = max(1, math.ceil(math.log2(SUBNETS[provider])))
    subnet_prefix = cidr.prefixlen + bits
    if subnet_prefix > MAX_SUBNET_PREFIX:
        checker.add(
            loc,
            f"{net.cidr} is too small to split into the {SUBNETS[provider]} subnets archform "
            f"creates on {provider}",
            f"use a /16 to /{MAX_SUBNET_PREFIX - bits} block, e.g. 10.42.0.0/16",
        )
        return
    usable = 2 ** (32 - subnet_prefix) - 2
    last_login = FIRST_LOGIN_HOST + len(_login_hosts(cluster)) - 1
    last = max(CONTROLLER_HOST, last_login)
    if provider == "gcp":
        last = max(last, FIRST_COMPUTE_HOST + cluster.compute.total_nodes - 1)
    if provider in ("gcp", "azure") and last >= usable:
        checker.add(
            loc,
            f"{net.cidr} leaves {usable} addresses per subnet, too few for the controller, "
            f"login and compute nodes (host number {last})",
            "use a larger block, e.g. 10.42.0.0/16",
        )


def _ranges(checker: _Checker, sizes: list[SizeProblem], blocks: Callable[[], list[Block]]) -> None:
    """Blocks too small or set where unused; else every overlapping pair of ranges."""
    for p in sizes:
        checker.add(p.field, p.message, p.hint)
    if sizes or checker.problems:
        return
    found = blocks()
    for first, second in overlap_pairs(found, found, lambda b: checker.written(b.field)):
        at = checker.written(first.field)
        where = f"line {at[1]}" if len(at) > 1 else "default"
        checker.add(second.field, *overlap_text(first, second, where))


def overlap_pairs(
    blocks: list[Block],
    others: list[Block] | None,
    position: Callable[[Block], tuple[int, ...]],
) -> list[tuple[Block, Block]]:
    """Each overlapping pair as (first, second), one pair per two fields.

    The second is the one written later; a range left at its default counts as written
    first, so the error lands on what the user wrote.
    """
    pairs = overlapping(blocks, None if others is blocks else others)
    seen: set[tuple[object, object]] = set()
    out = []
    for a, b in pairs:
        first, second = sorted((a, b), key=position)
        key = (first.field, second.field)
        if key not in seen:
            seen.add(key)
            out.append((first, second))
    return out


def overlap_text(first: Block, second: Block, where: str) -> tuple[str, str]:
    """(message, hint) of one overlapping pair; `where`: the first's position, if shown."""
    at = f", {where}" if where else ""
    message = (
        f"{second.what} {second.cidr} overlaps {first.what} {first.cidr} "
        f"({format_path(first.field)}{at})"
    )
    hint = (
        f"give {format_path(second.field)} a range outside {first.parent or first.cidr}: "
        "overlapping networks cannot be attached to one VM, peered or routed"
    )
    return message, hint


def _login_hosts(cluster: TrainingCluster) -> list[str]:
    if cluster.hosts is not None:
        return [h.name for h in cluster.hosts.login]
    return [str(i) for i in range(cluster.scheduler.login_nodes)]


def _lustre(checker: _Checker, catalog: Catalog, cluster: TrainingCluster) -> None:
    provider = cluster.placement.provider
    service = catalog.lustre.get(provider)
    if service is None:
        return
    for i, storage in enumerate(cluster.storage):
        if storage.kind != "lustre":
            continue
        scratch = provider == "aws" and storage.deployment == "scratch"
        tier = storage.throughput_mbps_per_tib or service.default_tier
        if not scratch and service.tier(tier) is None:
            checker.add(
                ("storage", i, "throughput_mbps_per_tib"),
                f"{service.product} has no {tier} MB/s/TiB tier",
                f"set throughput_mbps_per_tib to {service.tier_names}",
            )
        if provider == "aws" and storage.source and not storage.source.startswith("s3://"):
            scheme = storage.source.split("://", 1)[0]
            checker.add(
                ("storage", i, "source"),
                f"FSx for Lustre links to S3 only, not {scheme}://",
                "use an s3:// source or drop `source`",
            )


def _gcp_layouts(checker: _Checker, catalog: Catalog, cluster: TrainingCluster) -> None:
    """GPU node groups share one GPU network layout; CPU groups use the system VPC only."""
    # A group without `gpu` after the catalog defaults (spec.defaults) has no GPUs.
    gpu_groups = [(i, g) for i, g in enumerate(cluster.compute.groups) if g.gpu is not None]
    if not gpu_groups:
        return
    first_type = gpu_groups[0][1].instance_type
    first = gpu_network(catalog, first_type)
    for i, group in gpu_groups[1:]:
        if gpu_network(catalog, group.instance_type) != first:
            checker.add(
                (*group_loc(cluster, i), "instance_type"),
                f"{group.instance_type} needs a different GPU network layout than "
                f"{first_type} (GPU VPCs, RDMA subnets, MTU)",
                "put machine families with different NIC layouts in separate clusters",
            )


def _edge(checker: _Checker, fleet: InferenceFleet) -> None:
    """TLS at a public entry point needs a certificate name; an API key, a server that checks it."""
    edge = fleet.edge
    public = bool(fleet.traffic and fleet.traffic.global_load_balancer)
    provider = fleet.placement.provider
    # Global Accelerator and a Gateway's global IP have no name a public CA would certify
    # for you; Front Door's own *.azurefd.net name comes with Front Door's certificate.
    if public and edge.protocol == "https" and edge.domain is None and provider != "azure":
        checker.add(
            ("traffic", "global_load_balancer"),
            f"an HTTPS entry point on {provider} needs the name clients use, for its "
            "managed certificate",
            "add edge: {domain: api.example.com} (a name in a zone you control), or "
            "edge: {protocol: http} to opt into plain HTTP (lint SEC004 reports it)",
            prefer="key",
        )
    if edge.auth == "api_key" and engine(fleet.server.kind).api_key is None:
        keyed = [e for e in (engine(k) for k in kinds()) if e.api_key is not None]
        names = ", ".join(f"{e.kind} ({e.api_key.env})" for e in keyed if e.api_key)
        checker.add(
            ("server", "kind"),
            f"archform configures an API key only for {names}, not {fleet.server.kind}",
            "set edge: {auth: none} and authenticate in front of the fleet, or serve with "
            + " or ".join(e.kind for e in keyed),
        )


def _fleet(checker: _Checker, catalog: Catalog, fleet: InferenceFleet) -> None:
    check_deployer(lambda loc, msg, hint: checker.add(loc, msg, hint), fleet)
    check_source_account(lambda loc, msg, hint: checker.add(loc, msg, hint), fleet)
    _quotas(checker, fleet.placement.provider, dict(fleet.placement.quotas), fleet_overs(fleet))
    _ranges(checker, fleet_size_problems(fleet), lambda: fleet_blocks(fleet))
    _edge(checker, fleet)
    try:
        split_source(fleet.model.source)
    except ValueError:
        checker.add(
            ("model", "source"),
            f"{fleet.model.source!r} names no version folder; replicas and promotions are "
            "kept per version",
            "point model.source at one version, e.g. s3://registry/<model>/<version>/",
        )
    _, sep, rest = fleet.model.source.partition("://")
    if sep and "" in rest.removesuffix("/").split("/"):
        # object keys are literal: s3://b//m/v1 and s3://b/m/v1 are different objects
        checker.add(
            ("model", "source"),
            f"{fleet.model.source!r} has an empty path segment (//); object storage keys are "
            "literal, so it names other objects than the same path with single slashes",
            "write each / once, e.g. s3://registry/<model>/<version>/",
        )
    from archform.spec.addons import addons_for, known_minors  # fleet-only data, loaded lazily

    version = fleet.kubernetes.version
    if addons_for(version) is None:
        known = known_minors()
        checker.add(
            ("kubernetes", "version"),
            f"archform has no sourced cluster-autoscaler and KEDA release for Kubernetes "
            f"{version} (its add-on table covers {known[0]}-{known[-1]})",
            f"use a version from {known[0]} to {known[-1]}, or add the releases to "
            "archform's spec/data/addons.yaml with their sources",
        )
    gpu = fleet.gpu_pool.gpu
    per_node = gpu.per_node if gpu else 1
    tp = fleet.server.tensor_parallel
    if tp > per_node:
        checker.add(
            ("server", "tensor_parallel"),
            f"tensor_parallel {tp} exceeds the {per_node} GPU{'s' if per_node > 1 else ''} of one "
            f"{fleet.gpu_pool.instance_type} node; archform generates single-node replicas",
            f"set tensor_parallel to at most {per_node}, or choose an instance type with more GPUs",
        )
    if fleet.placement.provider == "gcp":
        itype = fleet.gpu_pool.instance_type
        if catalog.gke_accelerator(itype, gpu.model if gpu else None) is None:
            checker.add(
                ("gpu_pool", "instance_type"),
                f"no GKE accelerator type is known for {itype}"
                + (f" with {gpu.model} GPUs" if gpu else ""),
                "use a GPU machine type of archform's catalog (a2-, a3-, a4-, g2-), or a GPU "
                "model the catalog knows in gpu_pool.gpu.model",
            )
