"""Autoscaling and capacity that track load, on archform's own output for the bundled fleets.

Every assertion reads what the generated Pulumi program registered under mocks (real
provider SDKs) or the generated manifests, and compares it with vendor facts: the add-on
releases of KEDA's compatibility matrix and cluster-autoscaler's "CA minor = control-plane
minor" rule, cluster-autoscaler's GPU label per cloud, the prometheus chart's 1m default,
the HPA's replica formulas, GKE's and AKS's maintenance-window limits.
"""

from __future__ import annotations

import base64
import datetime as dt
import email
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import support
from archform.render.generate import build_files
from archform.spec.catalog import load_catalog
from support.fleet_cases import GCP_FIXTURE, Case, _dump, bundled_fleets

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BUNDLED = {stem: raw for stem, raw in bundled_fleets()}
A10 = "inference-3region-a10"  # Azure, spot, 2 x A10 per node, TP 1
H100 = "inference-h100-single-region"  # AWS, on-demand, p5.48xlarge, TP 4
PLATFORM = "platform-two-tier-sivaro-serve"  # AWS, spot, g5.12xlarge, TP 4
_RUNS: dict[str, tuple[Path, Any]] = {}

# KEDA's published matrix (https://keda.sh/docs/2.21/operate/cluster/, 2026-08-13): v2.20
# is tested on 1.33-1.35 and nothing yet on 1.36; chart keda-2.20.2 (kedacore/charts).
KEDA_FOR_1_36 = "2.20.2"
# cluster-autoscaler tag cluster-autoscaler-1.36.1 (kubernetes/autoscaler, 2026-07-22).
CA_IMAGE_FOR_1_36 = "v1.36.1"


def _case(stem: str) -> Case:
    if stem == "gcp-fleet":
        return Case(stem, GCP_FIXTURE.read_text("utf-8"))
    return Case(stem, _dump(BUNDLED[stem]))


def _run(stem: str, tmp: Path) -> tuple[Path, Any]:
    if stem not in _RUNS:
        support.require_module(
            "pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes"
        )
        from archform.verify.pulumi_mock import run_program

        _, blueprints = _case(stem).load()
        out = tmp / stem
        for f in build_files(blueprints):  # type: ignore[arg-type]
            path = out / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f.content)
        root = next(p.parent.parent for p in out.rglob("pulumi/__main__.py"))
        _RUNS[stem] = (root, run_program(root / "pulumi"))
    return _RUNS[stem]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("capacity")


def _manifests(root: Path, kind: str) -> list[dict[str, Any]]:
    yaml = YAML(typ="safe", pure=True)
    found = []
    for path in sorted((root / "kubernetes").rglob(f"*-{kind.lower()}-*.yaml")):
        found.append(yaml.load(path.read_text("utf-8")))
    return found


def _helm(run: Any, chart: str) -> list[Any]:
    return [r for r in run.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == chart]


def _gpu_node_groups(run: Any) -> list[Any]:
    return [
        r for r in run.of_type("aws:eks/nodeGroup:NodeGroup") if "NVIDIA" in r.inputs["amiType"]
    ]


# --- cluster-autoscaler's GPU label ------------------------------------------------------


@pytest.mark.parametrize("stem", [H100, PLATFORM])
def test_aws_gpu_node_groups_carry_the_autoscaler_gpu_label(stem: str, tmp: Path) -> None:
    """cloudprovider/aws GPULabel = "k8s.amazonaws.com/accelerator" (aws_cloud_provider.go)."""
    _, run = _run(stem, tmp)
    groups = _gpu_node_groups(run)
    assert groups
    gpu = load_catalog().instance(BUNDLED[stem]["gpu_pool"]["instance_type"])
    assert gpu is not None and gpu.gpu_model
    for g in groups:
        assert g.inputs["labels"]["k8s.amazonaws.com/accelerator"] == (
            "nvidia-" + gpu.gpu_model.lower()
        )
    # The system pool is not a GPU pool.
    for r in run.of_type("aws:eks/nodeGroup:NodeGroup"):
        if r not in groups:
            assert "k8s.amazonaws.com/accelerator" not in r.inputs["labels"]


# --- add-on releases chosen per Kubernetes minor -----------------------------------------


@pytest.mark.parametrize("stem", [A10, H100, PLATFORM])
def test_keda_release_is_the_one_the_matrix_gives_for_the_minor(stem: str, tmp: Path) -> None:
    assert BUNDLED[stem]["kubernetes"]["version"] == "1.36"
    _, run = _run(stem, tmp)
    releases = _helm(run, "keda")
    assert len(releases) == len(BUNDLED[stem]["placement"]["regions"])
    for keda in releases:
        assert keda.inputs["version"] == KEDA_FOR_1_36


@pytest.mark.parametrize("stem", [H100, PLATFORM])
def test_cluster_autoscaler_minor_equals_the_control_plane_minor(stem: str, tmp: Path) -> None:
    _, run = _run(stem, tmp)
    versions = {c.inputs["version"] for c in run.of_type("aws:eks/cluster:Cluster")}
    assert versions == {"1.36"}
    releases = _helm(run, "cluster-autoscaler")
    assert len(releases) == len(BUNDLED[stem]["placement"]["regions"])
    for ca in releases:
        tag = ca.inputs["values"]["image"]["tag"]
        assert tag == CA_IMAGE_FOR_1_36
        assert tag.lstrip("v").rsplit(".", 1)[0] in versions
        # The chart the README asks for 1.34 and later (9.51.0+), not the 1.31-era 9.43.x.
        assert tuple(int(x) for x in ca.inputs["version"].split(".")) >= (9, 51, 0)


def test_validate_refuses_a_minor_without_a_sourced_addon_release(tmp_path: Path) -> None:
    path = support.BLUEPRINTS / f"{H100}.yaml"
    text = path.read_text("utf-8")
    assert 'version: "1.36"' in text
    bad = tmp_path / "h100-1.37.yaml"
    bad.write_text(text.replace('version: "1.36"', 'version: "1.37"'), "utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "archform", "validate", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    line = next(ln for ln in lines if "kubernetes.version" in ln)
    assert line.startswith(f"{bad}:")
    assert "no sourced cluster-autoscaler and KEDA release for Kubernetes 1.37" in line
    assert "Traceback" not in out.stderr


# --- Prometheus scrapes as often as KEDA polls -------------------------------------------


def _seconds(text: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600}
    return int(text[:-1]) * units[text[-1]]


@pytest.mark.parametrize("stem", [A10, H100, PLATFORM])
def test_prometheus_scrape_interval_matches_keda_polling(stem: str, tmp: Path) -> None:
    root, run = _run(stem, tmp)
    for prom in _helm(run, "prometheus"):
        # The chart's default is 1m (charts/prometheus/values.yaml server.global).
        interval = prom.inputs["values"]["server"]["global"]["scrape_interval"]
        for so in _manifests(root, "ScaledObject"):
            assert _seconds(interval) == so["spec"]["pollingInterval"]


# --- the HPA metric per ready replica ------------------------------------------------------


def _scaled_objects_for(metric: str, tmp: Path) -> list[dict[str, Any]]:
    raw = dict(BUNDLED[PLATFORM])
    raw["autoscaling"] = {"metric": metric, "target": 0.7 if metric == "kv_cache_usage" else 80}
    _, blueprints = Case(f"{PLATFORM}-{metric}", _dump(raw)).load()
    yaml = YAML(typ="safe", pure=True)
    return [
        yaml.load(f.content.decode())
        for f in build_files(blueprints)  # type: ignore[arg-type]
        if "-scaledobject-" in f.path
    ]


@pytest.mark.parametrize("metric", ["kv_cache_usage", "gpu_utilization"])
def test_averaged_metrics_count_only_ready_replicas(metric: str, tmp: Path) -> None:
    """`Value` targets: the HPA scales metric / target by the ready pods
    (replica_calculator.go getUsageRatioReplicaCount), so the average must be over ready
    pods as well, not diluted by replicas still loading."""
    objs = _scaled_objects_for(metric, tmp)
    assert objs
    for so in objs:
        (trigger,) = so["spec"]["triggers"]
        assert trigger["metricType"] == "Value"
        query = trigger["metadata"]["query"]
        ns = so["metadata"]["namespace"]
        assert f'kube_pod_status_ready{{namespace="{ns}", condition="true"}} == 1' in query
        assert "on(namespace, pod)" in query


@pytest.mark.parametrize("stem", [A10, H100, PLATFORM])
def test_queue_totals_stay_average_value_with_fallback(stem: str, tmp: Path) -> None:
    """Totals: AverageValue -> ceil(total / target) (GetExternalPerPodMetricReplicas), which
    no loading replica changes; KEDA's fallback needs AverageValue."""
    root, _ = _run(stem, tmp)
    for so in _manifests(root, "ScaledObject"):
        (trigger,) = so["spec"]["triggers"]
        assert trigger["metricType"] == "AverageValue"
        assert trigger["metadata"]["query"].startswith("sum(")
        assert so["spec"]["fallback"]["replicas"] >= 1


# --- consolidation -------------------------------------------------------------------------


@pytest.mark.parametrize("stem", [A10, H100, PLATFORM])
def test_serving_pods_list_every_local_volume_as_safe_to_evict(stem: str, tmp: Path) -> None:
    """FAQ: a pod with local storage blocks scale-down unless all its local volumes are
    listed in cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes."""
    root, _ = _run(stem, tmp)
    deployments = _manifests(root, "Deployment")
    assert deployments
    for d in deployments:
        tpl = d["spec"]["template"]
        local = {v["name"] for v in tpl["spec"]["volumes"] if "emptyDir" in v or "hostPath" in v}
        assert local
        listed = tpl["metadata"]["annotations"][
            "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
        ]
        assert set(listed.split(",")) == local
    for job in _manifests(root, "Job"):
        ann = job["spec"]["template"]["metadata"]["annotations"]
        assert ann["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"


@pytest.mark.parametrize("stem", [H100, PLATFORM])
def test_half_empty_gpu_nodes_are_consolidation_candidates(stem: str, tmp: Path) -> None:
    """cluster-autoscaler considers a GPU node for scale-down only strictly below
    --scale-down-gpu-utilization-threshold (default 0.5, FAQ): a node with a free replica
    slot must be below it."""
    root, run = _run(stem, tmp)
    gpus = load_catalog().instance(BUNDLED[stem]["gpu_pool"]["instance_type"])
    assert gpus is not None
    dep = _manifests(root, "Deployment")[0]
    server = dep["spec"]["template"]["spec"]["containers"][0]
    per_pod = int(server["resources"]["requests"]["nvidia.com/gpu"])
    slots = gpus.gpu_count // per_pod
    releases = _helm(run, "cluster-autoscaler")
    assert releases
    for ca in releases:
        args = ca.inputs["values"]["extraArgs"]
        threshold = float(args["scale-down-gpu-utilization-threshold"])
        one_free = (slots - 1) * per_pod / gpus.gpu_count
        assert one_free < threshold < 1.0
        if slots == 2:  # p5.48xlarge, TP 4: a half-empty node (0.5) was never a candidate
            assert threshold > 0.5


def test_aks_autoscaler_profile_is_explicit(tmp: Path) -> None:
    _, run = _run(A10, tmp)
    clusters = run.of_type("azure-native:containerservice:ManagedCluster")
    assert clusters
    for c in clusters:
        profile = c.inputs["autoScalerProfile"]
        assert profile["skipNodesWithLocalStorage"] == "true"
        assert profile["expander"] == "least-waste"


def test_gke_uses_the_optimize_utilization_profile(tmp: Path) -> None:
    _, run = _run("gcp-fleet", tmp)
    for c in run.of_type("gcp:container/cluster:Cluster"):
        assert c.inputs["clusterAutoscaling"]["autoscalingProfile"] == "OPTIMIZE_UTILIZATION"


# --- local NVMe as the weights cache -------------------------------------------------------


def _node_config(user_data: str) -> dict[str, Any]:
    msg = email.message_from_bytes(base64.b64decode(user_data))
    assert msg.is_multipart()
    (part,) = [p for p in msg.walk() if p.get_content_type() == "application/node.eks.aws"]
    doc = YAML(typ="safe", pure=True).load(part.get_payload())
    assert doc["apiVersion"] == "node.eks.aws/v1alpha1" and doc["kind"] == "NodeConfig"
    return doc


@pytest.mark.parametrize("stem", [H100, PLATFORM])
def test_weights_cache_on_local_nvme_where_the_instance_has_one(stem: str, tmp: Path) -> None:
    """p5.48xlarge (8 x 3.84 TB) and g5.12xlarge (3.8 TB) have instance store: nodeadm's
    localStorage RAID0 puts kubelet (emptyDir) and containerd on it."""
    root, run = _run(stem, tmp)
    info = load_catalog().instance(BUNDLED[stem]["gpu_pool"]["instance_type"])
    assert info is not None and info.local_nvme_gib > 0
    dep = _manifests(root, "Deployment")[0]
    pod = dep["spec"]["template"]["spec"]
    cache = next(v for v in pod["volumes"] if v["name"] == "models")
    assert "emptyDir" in cache  # under /var/lib/kubelet: on the RAID0
    templates = {t.name: t for t in run.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    gpu_templates = [t for n, t in templates.items() if "-gpu" in n]
    assert gpu_templates
    system = [t for n, t in templates.items() if n.endswith("-system")]
    assert system
    system_gib = system[0].inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"]
    for t in gpu_templates:
        cfg = _node_config(t.inputs["userData"])
        assert cfg["spec"]["instance"]["localStorage"]["strategy"] == "RAID0"
        ebs = t.inputs["blockDeviceMappings"][0]["ebs"]
        # The gp3 root holds the OS only: no longer sized or provisioned for the weights.
        assert ebs["volumeSize"] <= system_gib
        assert "throughput" not in ebs and "iops" not in ebs
    for t in system:
        assert not t.inputs.get("userData")


def test_no_local_nvme_no_instance_store_config(tmp: Path) -> None:
    """Standard_NV72ads_A10_v5 has a temp SSD, no NVMe (catalog): the cache stays on the OS
    disk, sized for it."""
    root, run = _run(A10, tmp)
    info = load_catalog().instance(BUNDLED[A10]["gpu_pool"]["instance_type"])
    assert info is not None and info.local_nvme_gib == 0
    dep = _manifests(root, "Deployment")[0]
    eph = int(
        dep["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"][
            "ephemeral-storage"
        ].rstrip("Gi")
    )
    for pool in run.of_type("azure-native:containerservice:AgentPool"):
        assert pool.inputs["osDiskSizeGB"] > eph


# --- spot diversification ------------------------------------------------------------------


def test_spot_pool_spans_shapes_with_the_same_memory_per_gpu(tmp: Path) -> None:
    _, run = _run(PLATFORM, tmp)
    catalog = load_catalog()
    base = catalog.instance("g5.12xlarge")
    assert base is not None and base.gpu_model
    spot = [g for g in _gpu_node_groups(run) if g.inputs["capacityType"] == "SPOT"]
    on_demand = [g for g in _gpu_node_groups(run) if g.inputs["capacityType"] == "ON_DEMAND"]
    assert spot and on_demand
    for g in spot:
        types = g.inputs["instanceTypes"]
        assert types[0] == "g5.12xlarge" and len(types) >= 2
        for name in types:
            other = catalog.instance(name)
            assert other is not None and other.gpu_model
            assert other.gpu_count == base.gpu_count
            gpu, base_gpu = catalog.gpu(other.gpu_model), catalog.gpu(base.gpu_model)
            assert gpu is not None and base_gpu is not None
            assert gpu.memory_gib == base_gpu.memory_gib
            assert (other.vcpus, other.memory_gib) == (base.vcpus, base.memory_gib)
    for g in on_demand:
        assert g.inputs["instanceTypes"] == ["g5.12xlarge"]


# --- maintenance windows ---------------------------------------------------------------------


def test_aks_planned_maintenance_for_upgrades_and_node_images(tmp: Path) -> None:
    _, run = _run(A10, tmp)
    configs = run.of_type("azure-native:containerservice:MaintenanceConfiguration")
    regions = len(BUNDLED[A10]["placement"]["regions"])
    names = sorted(c.inputs["configName"] for c in configs)
    assert names == sorted(
        ["aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"] * regions
    )
    for c in configs:
        window = c.inputs["maintenanceWindow"]
        assert 4 <= window["durationHours"] <= 24  # AKS MaintenanceWindow.durationHours
        assert window["schedule"]["weekly"] == {"dayOfWeek": "Sunday", "intervalWeeks": 1}
        assert window["utcOffset"] == "+00:00"


def test_gke_maintenance_window_meets_gkes_48_hours_in_32_days(tmp: Path) -> None:
    _, run = _run("gcp-fleet", tmp)
    clusters = run.of_type("gcp:container/cluster:Cluster")
    assert clusters
    for c in clusters:
        w = c.inputs["maintenancePolicy"]["recurringWindow"]
        start = dt.datetime.fromisoformat(w["startTime"].replace("Z", "+00:00"))
        end = dt.datetime.fromisoformat(w["endTime"].replace("Z", "+00:00"))
        assert w["recurrence"] == "FREQ=WEEKLY;BYDAY=SU" and start.weekday() == 6
        hours = (end - start).total_seconds() / 3600
        assert hours >= 4  # only windows of at least 4 contiguous hours count
        # The fewest weekly windows any 32-day span holds is 4.
        assert 4 * hours >= 48


# --- the NVIDIA device plugin runs on every GPU node, spot ones included ------------------


@pytest.mark.parametrize("stem", [A10, H100])
def test_device_plugin_tolerates_the_gpu_taint_and_the_providers_spot_taint(
    stem: str, tmp: Path
) -> None:
    """AKS taints spot pools kubernetes.azure.com/scalesetpriority=spot:NoSchedule
    (https://learn.microsoft.com/azure/aks/spot-node-pool); EKS spot node groups carry no taint.
    """
    _, run = _run(stem, tmp)
    releases = _helm(run, "nvidia-device-plugin")
    assert len(releases) == len(BUNDLED[stem]["placement"]["regions"])
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    aks_spot = {
        "key": "kubernetes.azure.com/scalesetpriority",
        "operator": "Equal",
        "value": "spot",
        "effect": "NoSchedule",
    }
    want = [gpu, aks_spot] if BUNDLED[stem]["placement"]["provider"] == "azure" else [gpu]
    for plugin in releases:
        assert plugin.inputs["values"]["tolerations"] == want
