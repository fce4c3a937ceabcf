"""Each fleet's Pulumi program under mocks with the real provider SDKs: what an SRE signs off.

Cases: every bundled InferenceFleet as written, the same fleets retargeted to the two other
clouds, and a GCP fixture. Assertions read what the program registered (type, inputs).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import support
from archform.render.generate import build_files
from archform.render.targets.fleet.view import fleet_view
from support.fleet_cases import Case, fleet_cases

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CASES = fleet_cases()
CONFIG = {"dnsZoneId": "Z0000000000000000MOCK", "dnsName": "api.example.com"}
_RUNS: dict[str, Any] = {}

CLUSTER = {
    "aws": "aws:eks/cluster:Cluster",
    "gcp": "gcp:container/cluster:Cluster",
    "azure": "azure-native:containerservice:ManagedCluster",
}


def _run(case: Case, tmp_root: Path) -> tuple[Any, dict[str, Any], Any]:
    if case.id not in _RUNS:
        support.require_module(
            "pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes"
        )
        from archform.verify.pulumi_mock import run_program

        fleet, blueprints = case.load()
        out = tmp_root / case.id.replace("@", "-")
        for f in build_files(blueprints):  # type: ignore[arg-type]
            path = out / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f.content)
        _RUNS[case.id] = (fleet, fleet_view(fleet), run_program(out / "pulumi", CONFIG))
    return _RUNS[case.id]


@pytest.fixture(params=CASES, ids=[c.id for c in CASES])
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _run(request.param, tmp_path_factory.getbasetemp() / "fleet-programs")


def _k8s(run: Any, kind: str) -> list[Any]:
    token = {
        "Deployment": "kubernetes:apps/v1:Deployment",
        "PodDisruptionBudget": "kubernetes:policy/v1:PodDisruptionBudget",
        "ScaledObject": "kubernetes:keda.sh/v1alpha1:ScaledObject",
    }[kind]
    return run.of_type(token)


def _gpu_pools(provider: str, run: Any) -> list[dict[str, Any]]:
    """(name, taints as key=value:Effect strings, spot, min, max) of every GPU pool."""
    pools = []
    if provider == "aws":
        for r in run.of_type("aws:eks/nodeGroup:NodeGroup"):
            if "NVIDIA" in r.inputs["amiType"]:
                pools.append(
                    {
                        "taints": [
                            f"{t['key']}={t['value']}:{t['effect']}"
                            for t in r.inputs.get("taints", [])
                        ],
                        "spot": r.inputs["capacityType"] == "SPOT",
                        "min": r.inputs["scalingConfig"]["minSize"],
                        "max": r.inputs["scalingConfig"]["maxSize"],
                    }
                )
    elif provider == "gcp":
        for r in run.of_type("gcp:container/nodePool:NodePool"):
            node = r.inputs["nodeConfig"]
            if node.get("guestAccelerators"):
                assert node["guestAccelerators"][0]["gpuDriverInstallationConfig"]
                pools.append(
                    {
                        "taints": [
                            f"{t['key']}={t['value']}:{t['effect']}" for t in node.get("taints", [])
                        ],
                        "spot": bool(node.get("spot")),
                        "min": r.inputs["autoscaling"]["totalMinNodeCount"],
                        "max": r.inputs["autoscaling"]["totalMaxNodeCount"],
                    }
                )
    else:
        for r in run.of_type("azure-native:containerservice:AgentPool"):
            pools.append(
                {
                    "taints": r.inputs.get("nodeTaints", []),
                    "spot": r.inputs.get("scaleSetPriority") == "Spot",
                    "min": r.inputs["minCount"],
                    "max": r.inputs["maxCount"],
                }
            )
    return pools


def test_one_cluster_per_region(ran: Any) -> None:
    fleet, view, run = ran
    provider = view.provider
    clusters = run.of_type(CLUSTER[provider])
    where = [c.inputs.get("region") or c.inputs.get("location") for c in clusters]
    assert sorted(where) == sorted(fleet.placement.all_regions)
    assert all(
        c.inputs.get("version", c.inputs.get("kubernetesVersion", c.inputs.get("minMasterVersion")))
        == fleet.kubernetes.version
        for c in clusters
    )


def test_gpu_pools_tainted_spot_as_declared_with_on_demand_floor(ran: Any) -> None:
    fleet, view, run = ran
    pools = _gpu_pools(view.provider, run)
    regions = len(fleet.placement.all_regions)
    spot = fleet.gpu_pool.purchase == "spot"
    floor = fleet.gpu_pool.on_demand_floor_per_region if spot else 0
    expected_kinds = ([False] if floor else []) + [spot]
    assert len(pools) == regions * len(expected_kinds)
    effect = "NO_SCHEDULE" if view.provider != "azure" else "NoSchedule"
    for pool in pools:
        assert f"nvidia.com/gpu=present:{effect}" in pool["taints"]
    on_demand = [p for p in pools if not p["spot"]]
    if floor:
        assert all(p["min"] == p["max"] == floor for p in on_demand)
        assert len(on_demand) == regions
    # the blueprint's maximum plus the rollout headroom (spec.rollout): maxSurge 25% of the
    # replicas at the maximum, in nodes, on the pool the autoscaler grows
    gpus = fleet.gpu_pool.gpu.per_node if fleet.gpu_pool.gpu else 1
    per_node = gpus // fleet.server.tensor_parallel
    peak = fleet.gpu_pool.max_nodes_per_region * per_node
    headroom = math.ceil(math.ceil(peak * 25 / 100) / per_node)
    assert sum(p["max"] for p in pools) == regions * (
        fleet.gpu_pool.max_nodes_per_region + headroom
    )
    if not spot:
        assert not any(p["spot"] for p in pools)


def test_system_pool_in_every_cluster(ran: Any) -> None:
    fleet, view, run = ran
    provider, regions = view.provider, len(fleet.placement.all_regions)
    if provider == "aws":
        system = [
            r
            for r in run.of_type("aws:eks/nodeGroup:NodeGroup")
            if "NVIDIA" not in r.inputs["amiType"] and not r.inputs.get("taints")
        ]
    elif provider == "gcp":
        system = [
            r
            for r in run.of_type("gcp:container/nodePool:NodePool")
            if not r.inputs["nodeConfig"].get("guestAccelerators")
        ]
    else:
        system = [
            p
            for c in run.of_type(CLUSTER["azure"])
            for p in c.inputs["agentPoolProfiles"]
            if p["mode"] == "System" and not p.get("nodeTaints")
        ]
    assert len(system) == regions


def test_no_public_api_access(ran: Any) -> None:
    fleet, view, run = ran
    clusters = run.of_type(CLUSTER[view.provider])
    cidrs = fleet.kubernetes.api_access_cidrs
    for c in clusters:
        text = json.dumps(c.inputs)
        assert "0.0.0.0/0" not in text
        if view.provider == "aws":
            vpc = c.inputs["vpcConfig"]
            assert vpc["endpointPrivateAccess"] is True
            assert vpc["endpointPublicAccess"] is False  # all bundled CIDRs are private
        elif view.provider == "gcp":
            assert c.inputs["privateClusterConfig"]["enablePrivateEndpoint"] is True
            got = [b["cidrBlock"] for b in c.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"]]
            assert got == cidrs
        else:
            # private; reached over the deployer VNet peering, the public FQDN resolves to
            # the private address (test_deployer_access)
            assert c.inputs["apiServerAccessProfile"] == {
                "enablePrivateCluster": True,
                "enablePrivateClusterPublicFQDN": True,
            }
    if view.provider == "aws":
        rules = run.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        assert sorted(r.inputs["cidrIpv4"] for r in rules) == sorted(cidrs * len(clusters))


def test_serving_objects_probe_spread_pdb_autoscaler(ran: Any) -> None:
    fleet, _, run = ran
    regions = len(fleet.placement.all_regions)
    per_node = fleet.gpu_pool.gpu.per_node if fleet.gpu_pool.gpu else 1
    tp = fleet.server.tensor_parallel
    deployments = _k8s(run, "Deployment")
    assert len(deployments) == regions
    for d in deployments:
        pod = d.inputs["spec"]["template"]["spec"]
        server = pod["containers"][0]
        # /v1/models answers 401 without the API key; vLLM's /health needs none and is
        # served only once the engine has loaded the model.
        assert server["readinessProbe"]["httpGet"]["path"] == "/health"
        assert server["startupProbe"]["httpGet"]["path"] == "/health"
        assert server["livenessProbe"]["httpGet"]["path"] == "/health"
        startup = server["startupProbe"]
        budget = startup["failureThreshold"] * startup["periodSeconds"]
        assert budget >= fleet.server.load_time_seconds
        assert server["resources"]["limits"]["nvidia.com/gpu"] == str(tp)
        gpu_toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        assert gpu_toleration in pod["tolerations"]
        zone = [
            c
            for c in pod["topologySpreadConstraints"]
            if c["topologyKey"] == "topology.kubernetes.io/zone"
        ]
        assert zone and zone[0]["whenUnsatisfiable"] == "ScheduleAnyway"
        shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
        assert shm["emptyDir"]["medium"] == "Memory"
        p99_s = (fleet.traffic.p99_latency_ms if fleet.traffic else 30_000) / 1000
        assert pod["terminationGracePeriodSeconds"] > p99_s + 15
        fetch = pod["initContainers"][0]["command"][-1]
        assert "huggingface" not in fetch and "hf://" not in fetch
    for pdb in _k8s(run, "PodDisruptionBudget"):
        assert pdb.inputs["spec"]["maxUnavailable"] == 1
        assert "minAvailable" not in pdb.inputs["spec"]
    assert len(_k8s(run, "PodDisruptionBudget")) == regions
    scalers = _k8s(run, "ScaledObject")
    assert len(scalers) == regions
    for s in scalers:
        spec = s.inputs["spec"]
        assert spec["minReplicaCount"] == fleet.gpu_pool.min_nodes_per_region * per_node // tp
        assert spec["maxReplicaCount"] == fleet.gpu_pool.max_nodes_per_region * per_node // tp
        assert "num_requests_waiting" in spec["triggers"][0]["metadata"]["query"]


def test_weights_read_in_region(ran: Any) -> None:
    fleet, view, run = ran
    source_region = fleet.model.source_region or fleet.placement.all_regions[0]
    for r in view.regions:
        if r.name == source_region:
            assert r.weights_uri == fleet.model.source
        else:
            assert r.replica_bucket and r.replica_bucket in r.weights_uri
            compact = r.name.replace("-", "")
            assert compact[:10] in r.weights_uri.replace("-", "")
    uris = [r.weights_uri for r in view.regions]
    assert len(set(uris)) == len(uris)
    deployments = {d.name.split("-deployment-")[0]: d for d in _k8s(run, "Deployment")}
    for r in view.regions:
        script = deployments[r.name].inputs["spec"]["template"]["spec"]["initContainers"][0]
        assert r.weights_bucket in script["command"][-1]


def test_one_global_entry_point(ran: Any) -> None:
    fleet, view, run = ran
    regions = len(fleet.placement.all_regions)
    entry = {
        "aws": [
            "aws:globalaccelerator/accelerator:Accelerator",
            "aws:globalaccelerator/listener:Listener",
        ],
        "gcp": [
            "kubernetes:gateway.networking.k8s.io/v1:Gateway",
            "gcp:compute/globalAddress:GlobalAddress",
        ],
        "azure": ["azure-native:cdn:Profile", "azure-native:cdn:AFDEndpoint"],
    }[view.provider]
    wanted = bool(fleet.traffic and fleet.traffic.global_load_balancer)
    for token in entry:
        found = run.of_type(token)
        if not wanted:
            assert found == []
        else:
            assert len(found) == 1, token
    if wanted:
        assert "global_endpoint" in run.outputs
    if wanted and view.provider == "aws":
        groups = run.of_type("aws:globalaccelerator/endpointGroup:EndpointGroup")
        assert sorted(g.inputs["endpointGroupRegion"] for g in groups) == sorted(
            fleet.placement.all_regions
        )
        for g in groups:
            assert g.inputs["healthCheckPath"] == "/health"
            assert g.inputs["endpointConfigurations"][0]["endpointId"].startswith("arn:aws:")
        records = run.of_type("aws:route53/record:Record")
        aliases = [r.inputs["name"] for r in records if r.inputs.get("aliases")]
        assert aliases == [fleet.edge.domain]  # the accelerator under the blueprint's name
    if wanted and view.provider == "azure":
        origins = run.of_type("azure-native:cdn:AFDOrigin")
        assert len(origins) == regions
        group = run.of_type("azure-native:cdn:AFDOriginGroup")[0]
        assert group.inputs["healthProbeSettings"]["probePath"] == "/health"


def test_storage_and_node_volumes_encrypted(ran: Any) -> None:
    _, view, run = ran
    if view.provider == "aws":
        templates = run.of_type("aws:ec2/launchTemplate:LaunchTemplate")
        groups = run.of_type("aws:eks/nodeGroup:NodeGroup")
        assert len(templates) == len(groups)
        for t in templates:
            assert all(b["ebs"]["encrypted"] == "true" for b in t.inputs["blockDeviceMappings"])
            assert t.inputs["metadataOptions"]["httpTokens"] == "required"
        for c in run.of_type("aws:eks/cluster:Cluster"):
            assert c.inputs["encryptionConfig"]["resources"] == ["secrets"]
        buckets = run.of_type("aws:s3/bucket:Bucket")
        sse = run.of_type(
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
        )
        blocks = run.of_type("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
        assert len(buckets) == len(sse) == len(blocks)
    elif view.provider == "gcp":
        for b in run.of_type("gcp:storage/bucket:Bucket"):
            assert b.inputs["publicAccessPrevention"] == "enforced"
            assert b.inputs["uniformBucketLevelAccess"] is True
    else:
        for a in run.of_type("azure-native:storage:StorageAccount"):
            assert a.inputs["allowBlobPublicAccess"] is False
            assert a.inputs["encryption"]["services"]["blob"]["enabled"] is True
    replicas = [r for r in view.regions if r.replica_bucket]
    token = {
        "aws": "aws:s3/bucket:Bucket",
        "gcp": "gcp:storage/bucket:Bucket",
        "azure": "azure-native:storage:StorageAccount",
    }[view.provider]
    assert len(run.of_type(token)) == len(replicas)
