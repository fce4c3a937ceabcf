"""Blueprints -> architecture graph: tiers, regions, node groups, fabric, storage, registry.

Layout as columns, left to right: the training tier (region -> cluster -> scheduler, node
groups, fabric, storage), the model registry of each Platform, and the serving tier
(fleet -> global entry point -> region -> model server, GPU pool, system pool). A Platform
draws the promotion arrow from its training cluster's checkpoint storage into the registry
and a dotted "pull weights" arrow from the registry to each serving region.
"""

from __future__ import annotations

from archform.diagram.model import Diagram, Edge, EdgeStyle, Group, Ids, Node
from archform.spec.catalog import load_catalog
from archform.spec.document import BlueprintSet
from archform.spec.models.inference import InferenceFleet
from archform.spec.models.platform import Platform
from archform.spec.models.training import NodeGroup, Storage, TrainingCluster
from archform.spec.provider import spec_of

_DESCRIPTION_CHARS = 60


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _link(tc: TrainingCluster, ng: NodeGroup, src: str, fabric: str, *, primary: bool) -> Edge:
    """A node group's own link: its instance type's bandwidth, not the primary group's.

    The cluster's `fabric` is the primary group's (filled from its type); another group of a
    catalog type reaches it at that type's bandwidth of the same kind, or only over plain
    Ethernet when its type lacks that fabric (a CPU partition beside GPU nodes).
    """
    fab = tc.fabric
    info = load_catalog().instance(ng.instance_type) if ng.instance_type else None
    if primary or info is None:
        return Edge(src, fabric, f"{fab.gbps_per_node} Gbps", "thick")
    if info.fabric_kind == fab.kind:
        gbps = info.fabric_gbps if fab.kind != "ethernet" else int(info.ethernet_gbps)
        return Edge(src, fabric, f"{gbps} Gbps", "thick")
    return Edge(src, fabric, f"ethernet {_num(info.ethernet_gbps)} Gbps", "solid")


def _describe(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    one = " ".join(text.split())
    if len(one) > _DESCRIPTION_CHARS:
        one = one[: _DESCRIPTION_CHARS - 3] + "..."
    return (one,)


class _Builder:
    def __init__(self, blueprints: BlueprintSet) -> None:
        self.blueprints = blueprints
        self.ids = Ids()
        self.edges: list[Edge] = []
        self.anchor: dict[str, str] = {}  # training cluster name -> node promoted from
        self.servers: dict[str, list[str]] = {}  # fleet name -> model-server node per region

    def training_tier(self, clusters: list[TrainingCluster]) -> Group:
        tier = Group(self.ids.make("g", "training_tier"), ("Training tier",))
        regions: dict[str, Group] = {}
        for tc in clusters:
            place = tc.placement
            zones = f" ({', '.join(place.zones)})" if place.zones else ""
            word = "region" if spec_of(place.provider).cloud else "site"
            where = f"{place.provider} {word} {', '.join(place.all_regions)}"
            if where not in regions:
                regions[where] = Group(self.ids.make("g", "region", where), (f"{where}{zones}",))
                tier.groups.append(regions[where])
            regions[where].groups.append(self.cluster(tc))
        return tier

    def cluster(self, tc: TrainingCluster) -> Group:
        group = Group(
            self.ids.make("g", "tc", tc.name),
            (f"{tc.name}: {tc.purpose.replace('_', ' ')}", *_describe(tc.description)),
        )
        sch = tc.scheduler
        if sch.kind == "slurm":
            extras = [
                x
                for x, on in (
                    ("accounting", sch.accounting),
                    ("pyxis", sch.containers == "pyxis"),
                    ("backup controller", sch.backup_controller),
                )
                if on
            ]
            lines = [
                f"Slurm {sch.version} controller",
                f"partitions: {', '.join(p.name for p in sch.partitions)}",
            ]
            if extras:
                lines.append(", ".join(extras))
        else:
            lines = ["Kubernetes scheduler"]
        scheduler = Node(self.ids.make("n", tc.name, "scheduler"), tuple(lines), "round")
        group.nodes.append(scheduler)
        fab = tc.fabric
        fabric = Node(
            self.ids.make("n", tc.name, "fabric"),
            (
                f"fabric: {fab.kind}",
                f"{fab.gbps_per_node} Gbps/node, {fab.rails} rails",
                f"topology: {fab.topology.kind.replace('_', ' ')}",
            ),
        )
        first_group = ""
        for ng in tc.compute.groups:
            machine = ng.instance_type or "on-prem node"
            if ng.gpu:
                gpus = (
                    f"{ng.gpu.per_node} x {ng.gpu.model} per node = "
                    f"{ng.nodes * ng.gpu.per_node} GPUs"
                )
            else:
                gpus = "CPU only"
            node = Node(
                self.ids.make("n", tc.name, "group", ng.name),
                (f"{ng.name}: {ng.nodes} x {machine}", gpus, ng.purchase.replace("_", " ")),
            )
            group.nodes.append(node)
            first_group = first_group or node.id
            self.edges.append(Edge(scheduler.id, node.id, "schedules"))
            self.edges.append(_link(tc, ng, node.id, fabric.id, primary=ng is tc.compute))
        group.nodes.append(fabric)
        anchor = first_group
        for store in tc.storage:
            node = Node(self.ids.make("n", tc.name, "storage", store.name), _storage(store), "db")
            group.nodes.append(node)
            style: EdgeStyle = "dotted" if store.kind == "object" else "solid"
            self.edges.append(Edge(first_group, node.id, store.mount or "reads", style))
            if store.purpose == "checkpoints" and anchor == first_group:
                anchor = node.id
        self.anchor[tc.name] = anchor
        return group

    def serving_tier(self, fleets: list[InferenceFleet]) -> Group:
        tier = Group(self.ids.make("g", "serving_tier"), ("Serving tier",))
        for fleet in fleets:
            tier.groups.append(self.fleet(fleet))
        return tier

    def fleet(self, fleet: InferenceFleet) -> Group:
        title = (
            f"{fleet.name}: {fleet.model.name} on {fleet.placement.provider}",
            *_describe(fleet.description),
        )
        group = Group(self.ids.make("g", "fleet", fleet.name), title)
        entry = None
        traffic = fleet.traffic
        if traffic is not None and traffic.global_load_balancer:
            entry = Node(
                self.ids.make("n", fleet.name, "entry"),
                (
                    "global load balancer",
                    f"peak {_num(traffic.peak_rps)} rps, p99 {traffic.p99_latency_ms} ms",
                ),
                "round",
            )
            group.nodes.append(entry)
        pool, server = fleet.gpu_pool, fleet.server
        gpu = f"{pool.gpu.per_node} x {pool.gpu.model} per node" if pool.gpu else "GPU"
        purchase = pool.purchase.replace("_", " ")
        if pool.purchase == "spot" and pool.on_demand_floor_per_region:
            purchase += f", on-demand floor {pool.on_demand_floor_per_region}"
        servers = []
        for region in fleet.placement.all_regions:
            rg = Group(self.ids.make("g", fleet.name, region), (f"region {region}",))
            srv = Node(
                self.ids.make("n", fleet.name, region, "server"),
                (
                    f"{server.kind} model server",
                    server.container_image,
                    f"tensor parallel {server.tensor_parallel}",
                ),
                "round",
            )
            gpus = Node(
                self.ids.make("n", fleet.name, region, "gpu_pool"),
                (
                    f"gpu_pool: {pool.min_nodes_per_region}..{pool.max_nodes_per_region}"
                    f" x {pool.instance_type}",
                    gpu,
                    purchase,
                ),
            )
            rg.nodes += [srv, gpus]
            self.edges.append(Edge(srv.id, gpus.id, "runs on"))
            if fleet.system_pool is not None:
                sp = fleet.system_pool
                rg.nodes.append(
                    Node(
                        self.ids.make("n", fleet.name, region, "system_pool"),
                        (f"system_pool: {sp.nodes_per_region} x {sp.instance_type}",),
                    )
                )
            if entry is not None:
                self.edges.append(Edge(entry.id, srv.id))
            servers.append(srv.id)
            group.groups.append(rg)
        self.servers[fleet.name] = servers
        return group

    def registry(self, platforms: list[Platform], sourced: set[str]) -> Group:
        tier = Group(self.ids.make("g", "registry_tier"), ("Model registry",))
        for plat in platforms:
            reg = plat.registry
            node = Node(
                self.ids.make("n", plat.name, "registry"),
                (f"{plat.name} registry", f"bucket {reg.bucket}", f"{reg.provider} {reg.region}"),
                "db",
            )
            tier.nodes.append(node)
            if plat.training in self.anchor:
                approval = plat.promotion.approval
                self.edges.append(
                    Edge(
                        self.anchor[plat.training],
                        node.id,
                        f"promote ({approval} approval)",
                        "thick",
                    )
                )
            for srv in self.servers.get(plat.inference, []):
                self.edges.append(Edge(node.id, srv, "pull weights", "dotted"))
            sourced.add(plat.inference)
        return tier

    def weights(self, fleet: InferenceFleet, group: Group) -> None:
        node = Node(
            self.ids.make("n", fleet.name, "weights"),
            (f"weights: {fleet.model.name}", fleet.model.source),
            "db",
        )
        group.nodes.insert(0, node)
        for srv in self.servers[fleet.name]:
            self.edges.append(Edge(node.id, srv, "pull weights", "dotted"))


def _storage(store: Storage) -> tuple[str, ...]:
    sizes = [] if store.capacity_tib is None else [f"{_num(store.capacity_tib)} TiB"]
    if store.throughput_mbps_per_tib:
        sizes.append(f"{store.throughput_mbps_per_tib} MB/s per TiB")
    lines = [f"{store.name}: {store.kind}", store.purpose.replace("_", " ")]
    if sizes:
        lines.append(", ".join(sizes))
    if store.source:
        lines.append(f"from {store.source}")
    return tuple(lines)


def build(blueprints: BlueprintSet) -> Diagram:
    """The architecture graph of every document loaded together."""
    b = _Builder(blueprints)
    clusters = [d.model for d in blueprints.documents if isinstance(d.model, TrainingCluster)]
    fleets = [d.model for d in blueprints.documents if isinstance(d.model, InferenceFleet)]
    platforms = [d.model for d in blueprints.documents if isinstance(d.model, Platform)]
    title = "architecture: " + ", ".join(d.name for d in blueprints.documents)
    diagram = Diagram(title)
    if clusters:
        diagram.groups.append(b.training_tier(clusters))
    serving = b.serving_tier(fleets) if fleets else None
    sourced: set[str] = set()
    if platforms:
        diagram.groups.append(b.registry(platforms, sourced))
    if serving is not None:
        for fleet, group in zip(fleets, serving.groups, strict=True):
            if fleet.name not in sourced:
                b.weights(fleet, group)
        diagram.groups.append(serving)
    diagram.edges = b.edges
    return diagram
