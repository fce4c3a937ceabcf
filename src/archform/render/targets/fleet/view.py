"""The inference-fleet view-model: typed, sorted data every fleet output is built from.

Names, pool sizes, replica bounds and the per-region weight location are decided here
once, so the Pulumi program, the Kubernetes manifests and the smoke playbook agree.
"""

from __future__ import annotations

import hashlib
import math
import re

from archform.estimate.inference import KNEE_CONCURRENCY, capacity, weights_gib
from archform.render.targets.common.clouds import cloud
from archform.render.targets.kubernetes.provider import fleet_of
from archform.render.targets.kubernetes.records import (
    AddonsView,
    AddonView,
    AutoscalingView,
    CapacityView,
    DeployerView,
    DiskView,
    EdgeView,
    FleetView,
    GpuPoolView,
    MaintenanceView,
    ModelView,
    PointerView,
    RegionView,
    ReleaseView,
    ReplicaBounds,
    ServerView,
    ServingView,
    SystemPoolView,
)
from archform.spec.addons import AddonRelease, addons_for
from archform.spec.addresses import public_addresses
from archform.spec.catalog import Catalog, InstanceInfo, load_catalog
from archform.spec.container_images import pinned
from archform.spec.engines import engine
from archform.spec.errors import UsageError
from archform.spec.models.inference import InferenceFleet
from archform.spec.networks import fleet_networks
from archform.spec.provider import spec_of
from archform.spec.release import Release, pointer_uri, split_source
from archform.spec.rollout import fleet_headroom_nodes

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def gke_accelerator(fleet: InferenceFleet) -> str:
    """The GKE `guest_accelerators.type` of the GPU pool (catalog: family, else GPU model)."""
    gpu = fleet.gpu_pool.gpu
    accel = load_catalog().gke_accelerator(fleet.gpu_pool.instance_type, gpu.model if gpu else None)
    assert accel is not None, "checked by spec.buildable"
    return accel


# Node disk budget. Kubelet's default hard eviction thresholds are nodefs.available<10% and
# imagefs.available<15% (https://kubernetes.io/docs/concepts/scheduling-eviction/
# node-pressure-eviction/#hard-eviction-thresholds); with images and pods on the root
# volume only 85% of it may be used.
DISK_USABLE = 0.85
# Unpacked container images on a GPU node (server image, CLI image, daemonsets): a budget,
# not a measured size; vLLM/TGI/Triton images unpack to a few tens of GiB.
IMAGE_BUDGET_GIB = 60
# Per pod beyond the weights: container logs, writable layers, compile caches.
POD_SCRATCH_GIB = 10
# gp3 maximums per volume (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html):
# 1,000 MiB/s and 16,000 IOPS; the weights are read once per pod start at full speed.
GP3_THROUGHPUT_MIBPS = 1000
# Seconds for a terminating pod's removal from the Service endpoints to reach kube-proxy and
# the load balancers; requests may still arrive during it.
DEREGISTER_S = 10
GP3_IOPS = 16000
# KEDA polls its triggers every 30 s by default and archform sets 15 s (ScaledObject
# pollingInterval, https://keda.sh/docs/2.20/reference/scaledobject-spec/#pollinginterval);
# the prometheus chart scrapes every 1m by default (server.global.scrape_interval in
# prometheus-community/helm-charts charts/prometheus/values.yaml). Prometheus scrapes at
# the same interval, so every poll sees a sample at most one interval old.
METRICS_INTERVAL_S = 15


# AWS quotes instance-store sizes in GB (catalog local_nvme_gib "unconverted"), 10^9 bytes.
GIB_PER_GB = 10**9 / 2**30
# Root volume of a GPU node whose kubelet and containerd live on the instance store: the OS
# and logs only (the system pool's floor).
NVME_ROOT_GIB = 100


def gpu_label_value(gpu_model: str) -> str:
    """`nvidia-<model>` as cluster-autoscaler's AWS provider names GPU types (nvidia-a10g)."""
    return "nvidia-" + re.sub(r"[^a-z0-9]+", "-", gpu_model.lower()).strip("-")


def scale_down_gpu_threshold(replicas_per_node: int) -> float:
    """GPU request share below which a node is a consolidation candidate.

    A node holds `replicas_per_node` replicas; one with a free slot is at (k-1)/k, and
    cluster-autoscaler considers only nodes strictly below the threshold (default 0.5,
    FAQ "scale-down-gpu-utilization-threshold"), so a half-empty 2-replica node (0.5) is
    never consolidated at the default. Half a slot below full makes every node with a free
    slot a candidate; it is removed only when its pods fit elsewhere (the autoscaler's
    scheduling simulation) and the PodDisruptionBudget allows it.
    """
    k = max(1, replicas_per_node)
    return round(max(0.5, 1 - 1 / (2 * k)), 3)


def spot_shapes(catalog: Catalog, base: InstanceInfo | None, provider: str) -> list[str]:
    """Other instance types a spot pool of `base` may launch (AWS).

    The same GPUs per node, memory per GPU, vCPUs and memory as `base` (cluster-autoscaler
    sizes a node group from one type and asks for types of equal CPU and memory,
    cloudprovider/aws/README.md "Using Mixed Instances Policies and Spot Instances"),
    current generation, local NVMe when `base` has it.

    EKS managed node groups take several instance types for Spot
    (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html, "Spot");
    a GKE node pool or an AKS agent pool has one machine type, so only AWS gets shapes here.
    """
    if base is None or not fleet_of(provider).spot_shapes or base.gpu_model is None:
        return []
    gpu = catalog.gpu(base.gpu_model)
    out = []
    for other in sorted(catalog.instances.values(), key=lambda i: i.name):
        if other.name == base.name or other.provider != provider or other.kind != "gpu":
            continue
        if other.gpu_model is None or other.generation != "current":
            continue
        g = catalog.gpu(other.gpu_model)
        same = (
            other.gpu_count == base.gpu_count
            and g is not None
            and gpu is not None
            and g.memory_gib == gpu.memory_gib
            and other.vcpus == base.vcpus
            and other.memory_gib == base.memory_gib
            and (other.local_nvme_gib > 0) == (base.local_nvme_gib > 0)
        )
        if same:
            out.append(other.name)
    return out


def node_disk_gib(pods_per_node: int, pod_ephemeral_gib: int) -> int:
    """Root volume that holds `pods_per_node` pods' ephemeral storage plus the images."""
    return math.ceil((pods_per_node * pod_ephemeral_gib + IMAGE_BUDGET_GIB) / DISK_USABLE)


def _all_private(cidrs: list[str]) -> bool:
    """No range admits a public address (address arithmetic, spec.addresses)."""
    return all(public_addresses(c) == 0 for c in cidrs)


def served_release(fleet: InferenceFleet, release: Release | None = None) -> Release:
    """The release the fleet serves: `release` (from release.json) or the blueprint's version.

    The blueprint's version is the last folder of `model.source`
    (``s3://registry/llama-8b/2026-03/`` serves ``2026-03``).
    """
    base, version = split_source(fleet.model.source)  # a version folder: spec.buildable
    if release is None:
        return Release(model=fleet.model.name, version=version, source=fleet.model.source)
    if release.model != fleet.model.name:
        raise UsageError(
            f"{fleet.name}: release.json serves model {release.model!r}, the blueprint "
            f"{fleet.model.name!r}",
            "promote the blueprint's model, or delete the stale release.json",
        )
    if split_source(release.source)[0] != base:
        raise UsageError(
            f"{fleet.name}: release.json reads {release.source!r}, outside model.source's "
            f"registry folder {base!r}",
            "promote into the registry the blueprint names, or delete the stale release.json",
        )
    return release


def release_pointer(fleet: InferenceFleet) -> PointerView | None:
    """The registry object that records the served release, read by the fleet's program.

    Only `archform promote` writes it, and promote speaks the S3 API: other registries hold
    no pointer, and their programs check the local release.json alone.
    """
    if not fleet.model.source.startswith("s3://"):
        return None
    uri = pointer_uri(fleet.model.source, fleet.name)
    return PointerView(
        uri=uri,
        bucket=_bucket_of(uri),
        key=key_prefix(uri),
        region=fleet.model.source_region or fleet.placement.all_regions[0],
    )


def replica_uri(fleet: InferenceFleet, region: str, release: Release) -> str:
    """Where pods in `region` read the weights: the registry, or the in-region replica.

    Replica paths carry the version (``.../models/<model>/<version>/``): a new version is
    copied beside the old one, so regions not yet rolled keep reading complete weights.
    """
    source_region = fleet.model.source_region or fleet.placement.all_regions[0]
    if region == source_region or not fleet.model.replicate_to_regions:
        return release.source
    path = f"models/{fleet.model.name}/{release.version}/"
    return cloud(fleet.placement.provider).object_url(replica_bucket(fleet, region), path)


def release_slug(version: str) -> str:
    """A DNS-1123 label fragment naming one version (lowercase, <= 30 chars, unique)."""
    digest = hashlib.sha256(version.encode()).hexdigest()[:8]
    clean = re.sub(r"[^a-z0-9-]", "-", version.lower()).strip("-")[:20].rstrip("-")
    return f"{clean}-{digest}" if clean else digest


def replica_bucket(fleet: InferenceFleet, region: str) -> str:
    """Name of the per-region replica bucket (Azure: storage account, 3-24 lowercase alnum)."""
    # Bucket and storage-account names are global across all customers: a stable hash of
    # fleet and region makes a clash with someone else's bucket unlikely.
    digest = hashlib.sha256(f"{fleet.name}/{region}".encode()).hexdigest()[:6]
    return fleet_of(fleet.placement.provider).replica_bucket(fleet.name, region, digest)


def _bucket_of(uri: str) -> str:
    """Bucket (s3/gs) or storage account (Azure blob URL) of a weights URI."""
    scheme, _, rest = uri.partition("://")
    host = rest.split("/", 1)[0]
    return host.split(".", 1)[0] if scheme == "https" else host


def key_prefix(uri: str) -> str:
    """Object key prefix of a weights URI inside its bucket (Azure: inside the container)."""
    scheme, _, rest = uri.partition("://")
    path = rest.split("/", 1)[1] if "/" in rest else ""
    if scheme == "https":
        path = path.split("/", 1)[1] if "/" in path else ""
    return path


def pool_suffix(instance_type: str) -> str:
    """Four hex digits of the GPU instance type, appended to every GPU pool name.

    A pool's instance type cannot change in place (EKS node groups, GKE node pools and AKS
    agent pools are replaced), and a replacement under the same name either collides with
    the pool it replaces or must delete all GPU capacity first. With the type in the name,
    a type change is a new pool beside the old one: Pulumi creates it, then deletes the old
    pool, whose nodes the provider drains.
    """
    return hashlib.sha256(instance_type.encode("utf-8")).hexdigest()[:4]


def _pools(fleet: InferenceFleet, per_node: int) -> list[GpuPoolView]:
    """The GPU pools of each region.

    The one the autoscaler grows carries the rollout headroom (spec.rollout): the nodes a
    rollout's surge pods need at the maximum.
    """
    pool = fleet.gpu_pool
    spot = pool.purchase == "spot"
    floor = min(pool.on_demand_floor_per_region, pool.max_nodes_per_region) if spot else 0
    headroom = fleet_headroom_nodes(fleet)
    sfx = pool_suffix(pool.instance_type)  # AKS: <= 12 lowercase alphanumerics
    pools: list[GpuPoolView] = []
    if floor:
        pools.append(GpuPoolView(f"gpuod{sfx}", spot=False, min=floor, max=floor, gpus=per_node))
    pools.append(
        GpuPoolView(
            name=f"gpuspot{sfx}" if spot else f"gpu{sfx}",
            spot=spot,
            min=max(0, pool.min_nodes_per_region - floor),
            max=pool.max_nodes_per_region - floor + headroom,
            gpus=per_node,
        )
    )
    return pools


def fleet_view(fleet: InferenceFleet, release: Release | None = None) -> FleetView:
    """Everything the fleet templates need (serving `release`)."""
    served = served_release(fleet, release)
    catalog = load_catalog()
    gpu = fleet.gpu_pool.gpu
    per_node = gpu.per_node if gpu else 1
    tp = fleet.server.tensor_parallel
    assert tp <= per_node, "checked by spec.buildable"
    replicas_per_node = per_node // tp
    gpu_info = catalog.instance(fleet.gpu_pool.instance_type)
    share = tp / per_node
    vcpus = gpu_info.vcpus if gpu_info else 8
    mem = gpu_info.memory_gib if gpu_info else 32.0
    cidrs = list(fleet.kubernetes.api_access_cidrs)
    private_api = _all_private(cidrs)
    weights = weights_gib(fleet.model.params, fleet.model.precision)
    cache_gib = math.ceil(weights * 1.2) + 2
    pod_ephemeral = cache_gib + POD_SCRATCH_GIB
    # The stage Job (system pool) needs a scratch copy of the weights where it copies
    # through its own disk.
    parts = fleet_of(fleet.placement.provider)
    stage_scratch = cache_gib + 1 if parts.stage_scratch_copy else 1
    regions = []
    nets = fleet_networks(fleet)
    for i, region in enumerate(fleet.placement.all_regions):
        net = nets.regions[i]
        uri = replica_uri(fleet, region, served)
        key = re.sub(r"[^a-z0-9]", "", region)
        # Workload identities that span a project need per-region service-account names.
        suffix = f"-{key}" if parts.per_region_identity else ""
        regions.append(
            RegionView(
                name=region,
                index=i,
                key=key,
                reader_sa=f"model-reader{suffix}",
                replicator_sa=f"model-replicator{suffix}",
                cluster=f"{fleet.name}-{region}"[:40].rstrip("-"),
                vpc_cidr=net.block,
                nodes_cidr=net.nodes,
                pods_cidr=net.pods,
                services_cidr=net.services,
                control_plane_cidr=net.control_plane,
                endpoints_cidr=net.endpoints,
                public_cidrs=list(net.public),
                private_cidrs=list(net.private),
                weights_uri=uri,
                weights_bucket=_bucket_of(uri),
                replica_bucket=replica_bucket(fleet, region) if uri != served.source else None,
                source_uri=served.source,
                source_bucket=_bucket_of(served.source),
                weights_base_prefix=key_prefix(split_source(uri)[0]),
                source_base_prefix=key_prefix(split_source(served.source)[0]),
            )
        )
    autoscaling = fleet.autoscaling
    provider = fleet.placement.provider
    nvme_gib = gpu_info.local_nvme_gib if gpu_info else 0.0
    unit = spec_of(provider).nvme_unit_bytes
    nvme_bytes_gib = nvme_gib * (unit / 2**30) if unit != 2**30 else nvme_gib
    # EKS (AL2023 nodeadm) puts kubelet and containerd on a RAID0 of the instance store when
    # asked; the cache moves there when it holds every pod's ephemeral storage and the images.
    on_nvme = parts.kubelet_on_nvme and nvme_bytes_gib >= node_disk_gib(
        replicas_per_node, pod_ephemeral
    )
    gpu_label = cloud(provider).autoscaler_gpu_label
    own_label = gpu_label is not None and not cloud(provider).autoscaler_gpu_label_by_platform
    spot = fleet.gpu_pool.purchase == "spot"
    window = fleet.kubernetes.maintenance_window
    cap = capacity(fleet)
    concurrency = cap.concurrency_per_replica if cap else KNEE_CONCURRENCY
    max_replicas = fleet.gpu_pool.max_nodes_per_region * replicas_per_node
    p99_s = math.ceil((fleet.traffic.p99_latency_ms if fleet.traffic else 30_000) / 1000)
    return FleetView(
        name=fleet.name,
        provider=fleet.placement.provider,
        k8s_version=fleet.kubernetes.version,
        validate_version=f"{fleet.kubernetes.version}.0",
        api_cidrs=cidrs,
        api_private=private_api,
        api_public_cidrs=[] if private_api else [c for c in cidrs if public_addresses(c) > 0],
        regions=regions,
        service_cidr=nets.service_cidr,
        pod_cidr=nets.pod_cidr,
        dns_service_ip=nets.dns_service_ip,
        release=ReleaseView(
            model=served.model,
            version=served.version,
            source=served.source,
            checksum=served.checksum,
            source_run=served.source_run,
            slug=release_slug(served.version),
            pointer=release_pointer(fleet),
        ),
        global_lb=bool(fleet.traffic and fleet.traffic.global_load_balancer),
        model=ModelView(
            name=fleet.model.name,
            source=fleet.model.source,
            source_region=fleet.model.source_region or fleet.placement.all_regions[0],
            source_account_id=fleet.model.source_account_id,
            max_context=fleet.model.max_context_tokens,
            weights_gib=round(weights, 2),
            cache_gib=cache_gib,
        ),
        disk=DiskView(
            pod_ephemeral_gib=pod_ephemeral,
            pods_per_node=replicas_per_node,
            gpu_node_gib=NVME_ROOT_GIB
            if on_nvme
            else node_disk_gib(replicas_per_node, pod_ephemeral),
            system_node_gib=max(100, node_disk_gib(1, stage_scratch)),
            image_budget_gib=IMAGE_BUDGET_GIB,
            usable=DISK_USABLE,
            gp3_throughput=GP3_THROUGHPUT_MIBPS,
            gp3_iops=GP3_IOPS,
        ),
        server=ServerView(
            kind=fleet.server.kind,
            # With its registry digest where archform's image table has one.
            image=pinned(fleet.server.container_image),
            tp=tp,
            port=fleet.server.port,
            load_time_seconds=fleet.server.load_time_seconds,
        ),
        gpu_pools=_pools(fleet, per_node),
        gpu_instance=fleet.gpu_pool.instance_type,
        gpu_model=gpu.model if gpu else "unknown",
        gpus_per_node=per_node,
        accelerator=gke_accelerator(fleet) if parts.accelerator_label else None,
        pod_cpu=max(1, int(vcpus * share * 0.8)),
        pod_memory_gib=max(4, int(mem * share * 0.8)),
        system_pool=SystemPoolView(
            instance=fleet.system_pool.instance_type
            if fleet.system_pool
            else _system_instance(fleet.placement.provider),
            nodes=fleet.system_pool.nodes_per_region if fleet.system_pool else 2,
        ),
        replicas=ReplicaBounds(
            min=max(1, fleet.gpu_pool.min_nodes_per_region * replicas_per_node),
            max=fleet.gpu_pool.max_nodes_per_region * replicas_per_node,
        ),
        autoscaling=AutoscalingView(
            metric=autoscaling.metric if autoscaling else "queue_depth",
            target=autoscaling.target if autoscaling else 8.0,
            interval_s=METRICS_INTERVAL_S,
        ),
        spot=fleet.gpu_pool.purchase == "spot",
        serving=ServingView(
            # Requests one replica runs at once: the estimate's per-replica concurrency
            # (the most that still meets the p99 target), so the server queues beyond it and
            # the autoscaler sees the queue.
            max_num_seqs=concurrency,
            # Replicas KEDA falls back to when Prometheus cannot be read: what the estimate
            # says the region needs at peak (never fewer than the minimum).
            fallback_replicas=min(
                max_replicas,
                max(
                    1,
                    fleet.gpu_pool.min_nodes_per_region * replicas_per_node,
                    cap.replicas_needed_per_region if cap else max_replicas,
                ),
            ),
            # A terminating pod first leaves the Service endpoints, then finishes what it
            # runs: the longest request within the p99 target, plus endpoint propagation.
            drain_s=DEREGISTER_S + p99_s,
            # Load-balancer request timeout: twice the p99 target, at least a minute.
            request_timeout_s=max(60, 2 * p99_s),
        ),
        deployer=_deployer(fleet),
        addons=_addons(fleet.kubernetes.version),
        capacity=CapacityView(
            gpu_node_labels={gpu_label: gpu_label_value(gpu.model if gpu else "gpu")}
            if own_label and gpu_label
            else {},
            scale_down_gpu_threshold=scale_down_gpu_threshold(replicas_per_node),
            local_nvme_gib=nvme_gib,
            cache_on_local_nvme=on_nvme,
            spot_instances=[fleet.gpu_pool.instance_type]
            + (spot_shapes(catalog, gpu_info, provider) if spot else []),
        ),
        maintenance=MaintenanceView(day=window.day, start_utc=window.start_utc, hours=window.hours),
        edge=edge_view(fleet),
    )


HTTPS_PORT = 443


def edge_view(fleet: InferenceFleet) -> EdgeView:
    """TLS and authentication at the entry point (spec.buildable checked the combination)."""
    edge = fleet.edge
    public = bool(fleet.traffic and fleet.traffic.global_load_balancer)
    keyed = edge.auth == "api_key"
    server = engine(fleet.server.kind)
    # The engine's own variable for its API key (spec.buildable refuses a key elsewhere).
    key = server.api_key if keyed else None
    return EdgeView(
        public=public,
        tls=public and edge.protocol == "https",
        domain=edge.domain,
        port=HTTPS_PORT if public and edge.protocol == "https" else fleet.server.port,
        auth=edge.auth,
        api_key_secret=f"{fleet.name}-api-key" if keyed else "",
        api_key_env=key.env if key else "",
        # With a key, the ready path (vLLM's /v1/models) answers 401 to probes and load
        # balancers; vLLM's /health is outside /v1 and its HTTP server starts only once the
        # engine has loaded the model (api_server.run_server builds the engine client before
        # serve_http).
        health_path=server.live_path if key and key.ready_needs_key else server.ready_path,
    )


def _addon(r: AddonRelease) -> AddonView:
    return AddonView(r.chart, r.chart_version, r.repo, r.version, r.tested, r.basis, r.source)


def _addons(version: str) -> AddonsView:
    """The add-on releases for the fleet's Kubernetes minor (validate refuses a minor without)."""
    found = addons_for(version)
    assert found is not None, "checked by spec.buildable"
    return AddonsView(
        keda=_addon(found.keda),
        cluster_autoscaler=_addon(found.cluster_autoscaler),
        cluster_autoscaler_image_tag=f"v{found.cluster_autoscaler.version}",
    )


def _deployer(fleet: InferenceFleet) -> DeployerView:
    """The deployer path of the blueprint, one network id per region (spec.deployer checks it)."""
    dep = fleet.kubernetes.deployer
    if dep is None:
        return DeployerView(via="none", networks={}, cidrs=[])
    if dep.network is None:
        return DeployerView(via="public_cidrs", networks={}, cidrs=list(dep.cidrs))
    regions = fleet.placement.all_regions
    networks = (
        {r: dep.network[r] for r in regions if r in dep.network}
        if isinstance(dep.network, dict)
        else dict.fromkeys(regions, dep.network)
    )
    return DeployerView(via="network", networks=networks, cidrs=list(dep.cidrs))


def _system_instance(provider: str) -> str:
    instance = cloud(provider).system_pool_instance
    assert instance is not None, "fleets run on clouds"
    return instance
