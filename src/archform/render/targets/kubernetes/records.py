"""The typed records of the inference-fleet view (built by fleet.view, read by every fleet output).

They live beside the Kubernetes objects built from them, so the dependency runs one way:
the fleet target (fleet/) imports kubernetes/, never the reverse (import-linter checks it).
Field order is the key order of the FLEET literal embedded in the generated program.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from archform.render.targets.kubernetes.awaits import AwaitView, StartupBudget


@dataclass(frozen=True, slots=True)
class RegionView:
    """One region of the fleet: its cluster, identities and where its pods read weights."""

    name: str
    index: int
    key: str
    reader_sa: str
    replicator_sa: str
    cluster: str
    vpc_cidr: str  # the region's /16 of placement.network.cidr; the ranges below from
    # spec.networks.fleet_networks, each provider's program reading the ones it creates
    nodes_cidr: str
    pods_cidr: str | None
    services_cidr: str | None
    control_plane_cidr: str | None
    endpoints_cidr: str | None
    public_cidrs: list[str]
    private_cidrs: list[str]
    weights_uri: str
    weights_bucket: str
    replica_bucket: str | None
    source_uri: str
    source_bucket: str
    weights_base_prefix: str
    source_base_prefix: str


@dataclass(frozen=True, slots=True)
class PointerView:
    """Where the registry records the fleet's served release (spec.release.pointer_uri)."""

    uri: str
    bucket: str
    key: str
    region: str


@dataclass(frozen=True, slots=True)
class ReleaseView:
    """The served release (release.json, else the blueprint's version).

    `pointer`: the registry object the program checks it against before it deploys; None
    where archform promote writes no pointer (registries other than S3).
    """

    model: str
    version: str
    source: str
    checksum: str  # empty when not known
    source_run: str
    slug: str
    pointer: PointerView | None


@dataclass(frozen=True, slots=True)
class ModelView:
    """The served model and its weights' size."""

    name: str
    source: str
    source_region: str
    # azure: the registry's storage account (model.source_account_id), read-granted to the
    # stage Job and the kubelet; None elsewhere
    source_account_id: str | None
    max_context: int
    weights_gib: float
    cache_gib: int


@dataclass(frozen=True, slots=True)
class DiskView:
    """Node and pod disk budget."""

    pod_ephemeral_gib: int
    pods_per_node: int
    gpu_node_gib: int
    system_node_gib: int
    image_budget_gib: int
    usable: float
    gp3_throughput: int
    gp3_iops: int


@dataclass(frozen=True, slots=True)
class ServerView:
    """The inference server container."""

    kind: str
    image: str
    tp: int
    port: int
    load_time_seconds: int


@dataclass(frozen=True, slots=True)
class GpuPoolView:
    """One GPU node pool per region (on-demand floor, or the spot/on-demand pool)."""

    name: str
    spot: bool
    min: int
    max: int
    gpus: int


@dataclass(frozen=True, slots=True)
class SystemPoolView:
    """The system node pool (add-ons, stage jobs)."""

    instance: str
    nodes: int


@dataclass(frozen=True, slots=True)
class ReplicaBounds:
    """Serving replicas per region."""

    min: int
    max: int


@dataclass(frozen=True, slots=True)
class AutoscalingView:
    """The KEDA scaling metric, its per-replica target and how often it is read."""

    metric: str
    target: float
    # KEDA's pollingInterval and Prometheus' scrape interval (equal: a poll between two
    # scrapes reads the same sample again).
    interval_s: int


@dataclass(frozen=True, slots=True)
class AddonView:
    """One add-on Helm release chosen for the fleet's Kubernetes minor (spec/data/addons.yaml)."""

    chart: str
    chart_version: str
    repo: str
    version: str
    tested: bool
    basis: str
    source: str


@dataclass(frozen=True, slots=True)
class AddonsView:
    """The add-on releases of the fleet's Kubernetes minor."""

    keda: AddonView
    cluster_autoscaler: AddonView
    cluster_autoscaler_image_tag: str


@dataclass(frozen=True, slots=True)
class CapacityView:
    """How GPU capacity follows load: autoscaler labels, consolidation, disks, spot shapes."""

    # Labels archform sets on GPU nodes for cluster-autoscaler (empty where the platform
    # labels GPU nodes itself).
    gpu_node_labels: dict[str, str]
    # A GPU node below this share of its GPUs requested is a scale-down candidate
    # (cluster-autoscaler --scale-down-gpu-utilization-threshold).
    scale_down_gpu_threshold: float
    # The GPU instance's local NVMe (catalog; 0: none) and whether the pods' weights cache
    # lives on it (instance store as kubelet's filesystem) instead of the root volume.
    local_nvme_gib: float
    cache_on_local_nvme: bool
    # Instance types of the spot GPU pools: the blueprint's first, then shapes with the same
    # GPUs per node, memory per GPU, vCPUs and memory (catalog).
    spot_instances: list[str]


@dataclass(frozen=True, slots=True)
class MaintenanceView:
    """The weekly UTC window for automatic upgrades (GKE, AKS planned maintenance)."""

    day: str
    start_utc: str
    hours: int


@dataclass(frozen=True, slots=True)
class ServingView:
    """Server concurrency, KEDA fallback and drain/timeout budgets."""

    max_num_seqs: int
    fallback_replicas: int
    drain_s: int
    request_timeout_s: int


@dataclass(frozen=True, slots=True)
class DeployerView:
    """How `pulumi up` reaches the APIs (blueprint kubernetes.deployer).

    `networks`: region -> the deployer network to connect; `cidrs`: the deployer's
    addresses; `via`: network, public_cidrs or none. Stack config may add public CIDRs.
    """

    via: str
    networks: dict[str, str]
    cidrs: list[str]


@dataclass(frozen=True, slots=True)
class EdgeView:
    """TLS and authentication at the entry point (blueprint `edge`).

    `tls`: the public entry point terminates TLS (HTTPS only); `port`: the port clients
    connect to there. `api_key_secret`/`api_key_env`: the Secret (key `api-key`) the program
    creates and the server's environment variable that reads it; empty without auth.
    `health_path`: the path load balancers and probes check, answered without the key.
    """

    public: bool
    tls: bool
    domain: str | None
    port: int
    auth: str
    api_key_secret: str
    api_key_env: str
    health_path: str


@dataclass(frozen=True, slots=True)
class FleetView:
    """Everything the fleet templates need (embedded in the program as the FLEET literal)."""

    name: str
    provider: str
    k8s_version: str
    validate_version: str
    api_cidrs: list[str]
    api_private: bool
    api_public_cidrs: list[str]
    regions: list[RegionView]
    service_cidr: str | None  # EKS and AKS Service range (placement.network.service_cidr)
    pod_cidr: str | None  # AKS overlay pod range (placement.network.pod_cidr)
    dns_service_ip: str | None  # AKS cluster DNS: the Service range's 10th address
    release: ReleaseView
    global_lb: bool
    model: ModelView
    disk: DiskView
    server: ServerView
    gpu_pools: list[GpuPoolView]
    gpu_instance: str
    gpu_model: str
    gpus_per_node: int
    accelerator: str | None
    pod_cpu: int
    pod_memory_gib: int
    system_pool: SystemPoolView
    replicas: ReplicaBounds
    autoscaling: AutoscalingView
    spot: bool
    serving: ServingView
    deployer: DeployerView
    addons: AddonsView
    capacity: CapacityView
    maintenance: MaintenanceView
    edge: EdgeView


@dataclass(frozen=True, slots=True)
class FleetData(FleetView):
    """The fleet view plus per-server paths and derived names, as embedded in the program."""

    ready_path: str
    live_path: str
    dns_label: str
    gateway_address: str
    # GCP: the Certificate Manager map and SSL policy the Gateway names (traffic.edge_names).
    edge_names: dict[str, str]
    p99_target_ms: int
    stage_timeout_s: int
    # The model server's startup budget and the Pulumi await (customTimeouts) per object kind
    # (kubernetes.awaits): the provider's 10-minute default is shorter than a model's start.
    startup: StartupBudget
    awaits: dict[str, AwaitView]
    # Seconds a grant needs before it is honoured (spec/data/deploy_timing.yaml).
    propagation: dict[str, int]
    # Tolerations of the provider's spot node taint (FleetProvider.spot_tolerations): the
    # model servers carry them, and so does the NVIDIA device plugin (workload.py).
    spot_tolerations: list[dict[str, str]]


@dataclass(frozen=True, slots=True)
class RegionObjects:
    """The Kubernetes objects of one region, in creation order (manifests are JSON objects)."""

    name: str
    objects: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class FleetContext:
    """What every fleet template receives."""

    fleet: FleetData
    regions: list[RegionObjects]
    p99_target_ms: int
    # The provider's README sections (macros of its templates/fleet/README.sections.j2).
    readme_sections: str
    # The smoke check goes through the global entry only: the origins admit nothing else
    # (FleetProvider.origin_header_check on a fleet with a global load balancer).
    smoke_through_entry: bool
    # The name the regional load balancers' certificates carry ("": none to check against;
    # FleetProvider.tls_at_service with TLS at the edge).
    service_tls_name: str
    timing_source: str = ""  # where the provider's await default is documented
    service_await_source: str = ""  # where the provider's Service await is defined
