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
    overlapping,
    training_blocks,
    training_size_problems,
)
from archform.spec.paths import Loc, format_path
from archform.spec.provider import names_where, spec_of
from archform.spec.quotas import Over, fleet_overs, raised_problems, training_overs
from archform.spec.release import split_source
from archform.spec.source import SourceMap
from archform.spec.source_access import check_source_account

if TYPE_CHECKING:  # checked by `kind` below: lint imports only the models it reads
    from archform.spec.models.inference import InferenceFleet
    from archform.spec.models.training import TrainingCluster

# Host numbers each Pulumi training target assigns in the first subnet it carves out of
# placement.network.cidr (controller .10, login .11-.26, static compute addresses from .32);
# how many subnets it carves is the provider's `training_subnets`.
CONTROLLER_HOST = 10
FIRST_LOGIN_HOST = 11
FIRST_COMPUTE_HOST = 32
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
    if kind == "TrainingCluster" and spec_of(model.placement.provider).cloud:
        _training(checker, catalog, model)
    elif kind == "InferenceFleet":
        _fleet(checker, catalog, model)
    elif kind == "Platform" and spec_of(model.registry.provider).registry_scheme is None:
        registries = names_where(lambda p: p.registry_scheme is not None)
        checker.add(
            ("registry", "provider"),
            f"archform does not generate a model registry on {model.registry.provider} yet",
            f"put the registry on {' or '.join(registries)}",
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
        spec = spec_of(cluster.placement.provider)
        if not spec.cloud:
            checker.add(
                ("extensions", "pulumi"),
                f"{spec.article} {spec.label} cluster has no Pulumi program to extend",
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
    spec = spec_of(provider)
    _quotas(
        checker,
        cluster.placement.provider,
        dict(cluster.placement.quotas),
        training_overs(cluster),
    )
    for i, group in enumerate(cluster.compute.groups):
        if group.instance_type is None:
            example = spec.example_instance
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
    spec.check_training(checker.add, catalog, cluster)
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
        if not spec_of(provider).filestore:
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
    spec = spec_of(provider)
    net = cluster.placement.network
    why = spec.existing_network_refusal
    if net.existing_vpc_id and why is not None:
        checker.add(
            ("placement", "network", "existing_vpc_id"),
            f"reusing an existing network is not supported on {provider}",
            f"{why}; remove placement.network.existing_*",
            prefer="key",
        )
    if net.existing_vpc_id and spec.existing_network_needs_subnets and not net.existing_subnet_ids:
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
    bits = max(1, math.ceil(math.log2(spec.training_subnets)))
    subnet_prefix = cidr.prefixlen + bits
    if subnet_prefix > MAX_SUBNET_PREFIX:
        checker.add(
            loc,
            f"{net.cidr} is too small to split into the {spec.training_subnets} subnets archform "
            f"creates on {provider}",
            f"use a /16 to /{MAX_SUBNET_PREFIX - bits} block, e.g. 10.42.0.0/16",
        )
        return
    usable = 2 ** (32 - subnet_prefix) - 2
    last_login = FIRST_LOGIN_HOST + len(_login_hosts(cluster)) - 1
    last = max(CONTROLLER_HOST, last_login)
    if spec.static_compute_hosts:
        last = max(last, FIRST_COMPUTE_HOST + cluster.compute.total_nodes - 1)
    if spec.host_room_checked and last >= usable:
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
        scratch = spec_of(provider).lustre_scratch and storage.deployment == "scratch"
        tier = storage.throughput_mbps_per_tib or service.default_tier
        if not scratch and service.tier(tier) is None:
            checker.add(
                ("storage", i, "throughput_mbps_per_tib"),
                f"{service.product} has no {tier} MB/s/TiB tier",
                f"set throughput_mbps_per_tib to {service.tier_names}",
            )
        linked = spec_of(provider).lustre_source
        if linked and storage.source and not storage.source.startswith(linked[0]):
            scheme = storage.source.split("://", 1)[0]
            checker.add(
                ("storage", i, "source"),
                f"{linked[1]}, not {scheme}://",
                f"use an {linked[0]} source or drop `source`",
            )


def _edge(checker: _Checker, fleet: InferenceFleet) -> None:
    """TLS at a public entry point needs a certificate name; an API key, a server that checks it."""
    edge = fleet.edge
    public = bool(fleet.traffic and fleet.traffic.global_load_balancer)
    provider = fleet.placement.provider
    # A global anycast address has no name a public CA would certify for you, unless the
    # provider's entry point comes with a certified name of its own.
    own_name = spec_of(provider).edge_has_own_name
    if public and edge.protocol == "https" and edge.domain is None and not own_name:
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
    spec_of(fleet.placement.provider).check_fleet(checker.add, catalog, fleet)
