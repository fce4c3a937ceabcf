"""The weights pipeline and capacity of every fleet program, read from the resources the real
provider SDKs registered under mocks (with the dependencies each registration carried).

- a stage Job (replication/verification step) precedes every Deployment, per region, and
  waits for the cloud side it needs (replica bucket, identities);
- serving identities read only their own region's copy; the stage identity writes only
  its region's replica;
- the node disk holds every pod's ephemeral-storage request plus the image budget.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
from test_program import CASES, _run

from archform.spec.catalog import load_catalog
from support.iam import allows

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(params=CASES, ids=[c.id for c in CASES])
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _run(request.param, tmp_path_factory.getbasetemp() / "fleet-programs")


def _gib(quantity: str) -> int:
    assert quantity.endswith("Gi"), quantity
    return int(quantity[:-2])


def test_a_stage_job_precedes_every_deployment(ran: Any) -> None:
    fleet, view, run = ran
    deployments = run.of_type("kubernetes:apps/v1:Deployment")
    assert len(deployments) == len(fleet.placement.all_regions)
    for dep in deployments:
        region = dep.name.split("-deployment-")[0]
        before = run.depends_on(dep)
        jobs = [n for n in before if n.startswith(f"{region}-job-stage-")]
        assert len(jobs) == 1, (dep.name, sorted(before))
        job = run.named(jobs[0])
        assert job.type == "kubernetes:batch/v1:Job"
        version = view.release.version
        annotations = dep.inputs["spec"]["template"]["metadata"]["annotations"]
        assert annotations["archform.io/model-version"] == version
        assert job.inputs["spec"]["template"]["metadata"]["annotations"] == {
            "archform.io/model-version": version,
            # a copy in flight is not evicted by a scale-down
            "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
        }
        # The Job runs as the replicator, on the system pool, and has a Pulumi wait long
        # enough for its own deadline.
        pod = job.inputs["spec"]["template"]["spec"]
        r = next(x for x in view.regions if x.name == region)
        assert pod["serviceAccountName"] == r.replicator_sa
        assert r.replicator_sa.startswith("model-replicator")
        term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["system"]
        # The Job itself waits for what it writes to and the identity it runs as.
        needs = run.depends_on(job)
        provider = view.provider
        if provider == "aws":
            assert f"{r.key}-model-replicator" in needs
            if r.replica_bucket:
                assert f"{r.key}-models" in needs
        elif provider == "gcp":
            assert f"replicator-{r.key}-{r.weights_bucket}" in needs
        else:
            assert f"{r.key}-replicator" in needs
            if r.replica_bucket:
                assert f"{r.key}-models-writer" in needs
        # Pods verify the manifest before the server starts.
        init = dep.inputs["spec"]["template"]["spec"]["initContainers"][0]["command"][-1]
        assert "sha256sum -c SHA256SUMS" in init and "check /models/weights" in init


def test_replica_paths_carry_the_version(ran: Any) -> None:
    _, view, _ = ran
    version = view.release.version
    for r in view.regions:
        assert r.weights_uri.rstrip("/").endswith(f"/{version}"), r.weights_uri
        assert "/current/" not in r.weights_uri


def test_gke_serving_identity_reads_only_its_region(ran: Any) -> None:
    _, view, run = ran
    if view.provider != "gcp":
        pytest.skip("GKE Workload Identity")
    members: dict[str, set[tuple[str, str]]] = {}
    for m in run.of_type("gcp:storage/bucketIAMMember:BucketIAMMember"):
        members.setdefault(m.inputs["bucket"], set()).add((m.inputs["member"], m.inputs["role"]))
    for r in view.regions:
        reader = f"/ns/{view.name}/sa/{r.reader_sa}"
        readable = {b for b, ms in members.items() if any(m.endswith(reader) for m, _ in ms)}
        assert readable == {r.weights_bucket}, (r.name, readable)
        assert all(
            role == "roles/storage.objectViewer"
            for ms in members.values()
            for m, role in ms
            if m.endswith(reader)
        )
        writer = f"/ns/{view.name}/sa/{r.replicator_sa}"
        written = {
            b
            for b, ms in members.items()
            if any(m.endswith(writer) and role == "roles/storage.objectUser" for m, role in ms)
        }
        assert written == ({r.replica_bucket} if r.replica_bucket else set())
    assert len({r.reader_sa for r in view.regions}) == len(view.regions)


def test_serving_identity_reads_only_its_region(ran: Any) -> None:
    _, view, run = ran
    if view.provider != "aws":
        pytest.skip(
            "per-region IAM policies: AWS here, GKE above; AKS uses per-cluster kubelet identities"
        )
    policies = {p.name: p.inputs["policy"] for p in run.of_type("aws:iam/rolePolicy:RolePolicy")}
    for r in view.regions:
        reader = policies[f"{r.key}-model-reader"]
        mine = f"arn:aws:s3:::{r.weights_bucket}/{r.weights_base_prefix}x/w.safetensors"
        assert allows(reader, "s3:GetObject", mine)
        assert not allows(reader, "s3:PutObject", mine)
        assert not allows(reader, "s3:DeleteObject", mine)
        for other in view.regions:
            if other.weights_bucket != r.weights_bucket:
                theirs = f"arn:aws:s3:::{other.weights_bucket}/{other.weights_base_prefix}x"
                assert not allows(reader, "s3:GetObject", theirs)
        replicator = policies[f"{r.key}-model-replicator"]
        source = f"arn:aws:s3:::{r.source_bucket}/{r.source_base_prefix}x"
        assert allows(replicator, "s3:GetObject", source)
        assert not allows(replicator, "s3:PutObject", source), "the registry is read-only"
        if r.replica_bucket:
            assert allows(replicator, "s3:PutObject", mine)
        assert "s3:*" not in json.dumps(reader) + json.dumps(replicator)


def _disk(view: dict[str, Any], run: Any) -> int:
    """GiB of the GPU node's root volume as the program requests it."""
    provider = view.provider
    if provider == "aws" and view.capacity.cache_on_local_nvme:
        # kubelet and containerd on a RAID0 of the instance store (nodeadm NodeConfig in the
        # GPU launch templates' user data); AWS quotes instance store in GB.
        gpu = [t for t in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if "-gpu" in t.name]
        assert gpu
        for t in gpu:
            assert "strategy: RAID0" in base64.b64decode(t.inputs["userData"]).decode()
        info = load_catalog().instance(view.gpu_instance)
        assert info is not None and info.local_nvme_gib > 0
        return int(info.local_nvme_gib * 10**9 / 2**30)
    if provider == "aws":
        sizes = {
            t.inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"]
            for t in run.of_type("aws:ec2/launchTemplate:LaunchTemplate")
            if t.inputs["blockDeviceMappings"][0]["ebs"].get("throughput")
        }
    elif provider == "gcp":
        sizes = {
            p.inputs["nodeConfig"]["diskSizeGb"]
            for p in run.of_type("gcp:container/nodePool:NodePool")
            if p.inputs["nodeConfig"].get("guestAccelerators")
        }
    else:
        sizes = {
            p.inputs["osDiskSizeGB"] for p in run.of_type("azure-native:containerservice:AgentPool")
        }
    assert len(sizes) == 1, sizes
    return int(sizes.pop())


def test_node_disk_holds_every_pods_ephemeral_storage_and_the_images(ran: Any) -> None:
    fleet, view, run = ran
    per_node = fleet.gpu_pool.gpu.per_node if fleet.gpu_pool.gpu else 1
    pods_per_node = per_node // fleet.server.tensor_parallel
    for dep in run.of_type("kubernetes:apps/v1:Deployment"):
        pod = dep.inputs["spec"]["template"]["spec"]
        server = pod["containers"][0]["resources"]
        init = pod["initContainers"][0]["resources"]
        request = _gib(server["requests"]["ephemeral-storage"])
        assert server["limits"]["ephemeral-storage"] == server["requests"]["ephemeral-storage"]
        # The pod's effective request is max(init, sum of containers): the init container
        # fills the same emptyDir, so it must not ask for less.
        assert _gib(init["requests"]["ephemeral-storage"]) == request
        cache = next(v for v in pod["volumes"] if v["name"] == "models")
        assert request >= _gib(cache["emptyDir"]["sizeLimit"])
        # The weights themselves (bf16: 2 bytes per parameter) fit the cache.
        assert _gib(cache["emptyDir"]["sizeLimit"]) * 2**30 >= fleet.model.params * 2
        disk = _disk(view, run)
        # Kubelet evicts at imagefs.available < 15%: only 85% of the root volume is usable.
        budget = pods_per_node * request + view.disk.image_budget_gib
        assert math.floor(disk * 0.85) >= budget, (disk, pods_per_node, request)


def test_gpu_node_storage_is_fast_and_object_storage_private(ran: Any) -> None:
    _, view, run = ran
    provider = view.provider
    if provider == "aws":
        for t in run.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
            ebs = t.inputs["blockDeviceMappings"][0]["ebs"]
            if ebs.get("throughput"):
                # gp3 maxima (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html)
                assert (ebs["throughput"], ebs["iops"]) == (1000, 16000)
        endpoints = run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")
        assert sorted(e.inputs["serviceName"] for e in endpoints) == sorted(
            f"com.amazonaws.{r.name}.s3" for r in view.regions
        )
        assert all(e.inputs["vpcEndpointType"] == "Gateway" for e in endpoints)
        assert all(len(e.inputs["routeTableIds"]) == 3 for e in endpoints)
    elif provider == "gcp":
        subnets = run.of_type("gcp:compute/subnetwork:Subnetwork")
        assert subnets and all(s.inputs["privateIpGoogleAccess"] for s in subnets)
