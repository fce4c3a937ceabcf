"""An unattended first deploy of every bundled fleet: what the generated programs register
under mocks with the real provider SDKs.

- Awaits: the Pulumi Kubernetes provider waits 10 minutes for a Deployment unless the
  resource's customTimeouts say otherwise, and an update waits for the whole rollout
  (pulumi-kubernetes provider/pkg/await/await.go and deployment.go at 94977969d). A model
  server pod downloads, verifies and loads its weights first; the budget below is rebuilt
  here from the registered Deployment (startup probe, strategy, grace period) and the
  sourced timing table, not taken from archform's own computation.
- AKS login: listClusterUserCredentials returns a kubeconfig running kubelogin in
  device-code mode (pulumi-azure-native#2399); it must reach the provider as a
  non-interactive login (kubelogin docs/book/src/concepts/login-modes/).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import support
from archform.spec.deploy_timing import deploy_timing
from support import BLUEPRINTS, programs

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# blueprint -> (fleet program folder inside the tree, parameters in the blueprint)
FLEETS = {
    "inference-3region-a10": ("pulumi", {"params": 8e9, "max_nodes": 40, "replicas_per_node": 2}),
    "inference-h100-single-region": (
        "pulumi",
        {"params": 70e9, "max_nodes": 8, "replicas_per_node": 2},
    ),
    "platform-two-tier": (
        "sivaro-serve/pulumi",
        {"params": 13e9, "max_nodes": 20, "replicas_per_node": 1},
    ),
}
PROVIDER_DEFAULT_AWAIT_S = 600  # DefaultDeploymentTimeoutMins = 10 (pulumi-kubernetes)


def _run(stem: str, root: Path, config: dict[str, str] | None = None) -> Any:
    support.require_module("pulumi", "pulumi_aws", "pulumi_azure_native", "pulumi_kubernetes")
    tree = programs.generate((BLUEPRINTS / f"{stem}.yaml").read_text("utf-8"), root, stem)
    project = tree / FLEETS[stem][0]
    if config is None:
        return programs.run(project)
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    return run_program(project, {**dry_run_config(project)[0], **config})


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("unattended")


def _budget(dep: dict[str, Any], params: float, max_replicas: int) -> tuple[float, float]:
    """(create, update) seconds: new node + pull + download and sha256 of bf16 weights at the
    table's object-store rate + the startup probe's allowance; updates in maxSurge waves."""
    t = deploy_timing()
    spec = dep["spec"]
    pod = spec["template"]["spec"]
    probe = pod["containers"][0]["startupProbe"]
    probe_s = probe["periodSeconds"] * probe["failureThreshold"]
    weights_bytes = params * 2  # bf16
    moved = 2 * weights_bytes / (t.object_store_mb_per_s * 1e6)
    per_pod = t.image_pull_s + moved + probe_s
    surge = spec["strategy"]["rollingUpdate"]["maxSurge"]
    surge_pods = (
        math.ceil(max_replicas * int(surge[:-1]) / 100) if isinstance(surge, str) else surge
    )
    waves = math.ceil(max_replicas / surge_pods)
    grace = pod["terminationGracePeriodSeconds"]
    return t.node_provision_s + per_pod, t.node_provision_s + waves * (per_pod + grace)


@pytest.mark.parametrize("stem", sorted(FLEETS))
def test_deployment_await_covers_the_startup_budget(stem: str, root: Path) -> None:
    run = _run(stem, root)
    facts = FLEETS[stem][1]
    deployments = run.of_type("kubernetes:apps/v1:Deployment")
    assert deployments
    for dep in deployments:
        waits = dict(dep.custom_timeouts)
        create, update = _budget(
            dep.inputs, facts["params"], facts["max_nodes"] * facts["replicas_per_node"]
        )
        assert create > PROVIDER_DEFAULT_AWAIT_S, "the default would time out"
        assert waits.get("create", 0) >= create, (dep.name, waits, create)
        assert waits.get("update", 0) >= update, (dep.name, waits, update)
        # A Deployment whose pod is still loading must not be marked failed first: the
        # provider's awaiter fails on ProgressDeadlineExceeded.
        assert dep.inputs["spec"]["progressDeadlineSeconds"] >= create - 60, dep.name
    for job in run.of_type("kubernetes:batch/v1:Job"):
        deadline = job.inputs["spec"]["activeDeadlineSeconds"]
        assert dict(job.custom_timeouts)["create"] > deadline, job.name


@pytest.mark.parametrize("stem", sorted(FLEETS))
def test_service_await_covers_the_replicas_it_selects(stem: str, root: Path) -> None:
    """The provider creates a Service only once its Endpoints settle with no
    notReadyAddresses (serviceInitAwaiter.checkAndLogStatus, provider/pkg/await/service.go at
    94977969d), 10 minutes by default. The Service is created beside the Deployment, so every
    replica KEDA starts is a not-ready address until its model has loaded: with the default
    the first `pulumi up` fails on the Service while the Deployment is still in budget."""
    run = _run(stem, root)
    facts = FLEETS[stem][1]
    services = run.of_type("kubernetes:core/v1:Service")
    assert services
    for svc in services:
        region = svc.name.split("-service-")[0]
        selector = svc.inputs["spec"]["selector"]
        (dep,) = [
            d
            for d in run.of_type("kubernetes:apps/v1:Deployment")
            if d.name.startswith(f"{region}-deployment-")
            and selector.items() <= d.inputs["spec"]["template"]["metadata"]["labels"].items()
        ]
        create, _ = _budget(
            dep.inputs, facts["params"], facts["max_nodes"] * facts["replicas_per_node"]
        )
        assert create > PROVIDER_DEFAULT_AWAIT_S, "the default would time out"
        waits = dict(svc.custom_timeouts)
        assert waits.get("create", 0) >= create, (svc.name, waits, create)


def test_a_70b_model_waits_over_an_hour_to_come_up(root: Path) -> None:
    """Llama 3.1 70B in bf16 is 140 GB; with a 900 s declared load (startup probe 1,350 s)
    the first pod cannot be ready within the provider's 10 minutes."""
    (dep,) = _run("inference-h100-single-region", root).of_type("kubernetes:apps/v1:Deployment")
    waits = dict(dep.custom_timeouts)
    assert waits["create"] >= 3600 and waits["update"] > waits["create"]


def _exec_users(run: Any) -> list[dict[str, Any]]:
    users = []
    for provider in run.of_type("pulumi:providers:kubernetes"):
        raw = provider.inputs["kubeconfig"]
        raw = raw.get("value", raw) if isinstance(raw, dict) else raw  # a secret on the wire
        config = (
            json.loads(raw) if raw.lstrip().startswith("{") else __import__("yaml").safe_load(raw)
        )
        users += [u["user"]["exec"] for u in config.get("users") or []]
    return users


def test_aks_kubeconfig_logs_in_without_a_person(root: Path) -> None:
    run = _run("inference-3region-a10", root)
    users = _exec_users(run)
    assert len(users) == 3, "one exec user per cluster"
    for user in users:
        assert user["command"] == "kubelogin"
        assert user["args"] == [
            "get-token",
            "--login",
            "azurecli",
            "--server-id",
            "6dae42f8-4368-4678-94ff-3960e28e3630",  # the AKS Entra server application
        ]


def test_ci_login_modes_are_chosen_by_config_and_interactive_ones_refused(root: Path) -> None:
    users = _exec_users(_run("inference-3region-a10", root, {"aksLogin": "workloadidentity"}))
    assert {u["args"][2] for u in users} == {"workloadidentity"}
    spn = _exec_users(_run("inference-3region-a10", root, {"aksLogin": "spn"}))
    assert all(
        u["args"][-2:] == ["--tenant-id", "00000000-0000-0000-0000-00000000000a"] for u in spn
    )
    from archform.verify.pulumi_mock import MockProgramError

    with pytest.raises(MockProgramError, match="aksLogin 'devicecode'"):
        _run("inference-3region-a10", root, {"aksLogin": "devicecode"})


def test_fleet_readme_documents_ci_credentials(root: Path) -> None:
    tree = programs.generate(
        (BLUEPRINTS / "inference-3region-a10.yaml").read_text("utf-8"),
        root,
        "inference-3region-a10",
    )
    readme = (tree / "pulumi" / "README.md").read_text("utf-8")
    for needle in (
        "### Credentials for CI",
        "pulumi config set aksLogin workloadidentity",
        "AZURE_FEDERATED_TOKEN_FILE",
        "## How long a deploy waits",
    ):
        assert needle in readme, needle


# --- readiness waits: role propagation (AKS) and identity associations (EKS) ----------------

AKS_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"  # Azure Kubernetes Service RBAC Cluster Admin
BLOB_ROLES = {
    "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",  # Storage Blob Data Reader
    "ba92f5b4-2d11-453d-a403-e96b0029c9fe",  # Storage Blob Data Contributor
}
DYNAMIC = "pulumi-python:dynamic:Resource"


def _waits_between(run: Any, consumer: Any, grant: Any) -> list[float]:
    """Seconds of every wait `consumer` depends on that itself waits for `grant`."""
    out = []
    for wait in run.of_type(DYNAMIC):
        if wait.name in run.depends_on(consumer) and grant.name in run.depends_on(wait):
            out.append(float(wait.inputs["seconds"]))
    return out


def test_aks_waits_for_role_propagation_before_using_the_roles(root: Path) -> None:
    """Azure RBAC for Kubernetes takes up to 5 minutes to honour a new assignment
    (learn.microsoft.com/azure/aks/manage-azure-rbac); data roles up to 10 minutes
    (learn.microsoft.com/azure/role-based-access-control/troubleshooting)."""
    run = _run("inference-3region-a10", root)
    assignments = run.of_type("azure-native:authorization:RoleAssignment")
    for region in ("eastus", "westeurope", "southeastasia"):
        provider = run.named(f"{region}-k8s")
        (admin,) = [
            a
            for a in assignments
            if a.inputs["roleDefinitionId"].endswith(AKS_ADMIN) and a.name.startswith(region)
        ]
        assert max(_waits_between(run, provider, admin), default=0) >= 300, region
        consumers = [
            r
            for r in run.resources
            if r.type in ("kubernetes:apps/v1:Deployment", "kubernetes:batch/v1:Job")
            and r.name.startswith(region)
        ]
        blob = [
            a
            for a in assignments
            if a.inputs["roleDefinitionId"].rsplit("/", 1)[-1] in BLOB_ROLES
            and a.name.startswith(region)
        ]
        assert consumers
        # every region reads the registry account (eastus serves from it, the others copy
        # from it), so each has a data grant the pods wait for
        assert blob, region
        for consumer in consumers:
            for grant in blob:
                assert max(_waits_between(run, consumer, grant), default=0) >= 600, (
                    consumer.name,
                    grant.name,
                )


@pytest.mark.parametrize("stem", ["inference-h100-single-region", "platform-two-tier"])
def test_pods_start_after_their_pod_identity_associations(stem: str, root: Path) -> None:
    """EKS Pod Identity injects credentials at pod creation and its associations are
    eventually consistent (EKS API reference, CreatePodIdentityAssociation)."""
    run = _run(stem, root)
    associations = {
        (a.name.split("-")[0], a.inputs["serviceAccount"]): a
        for a in run.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    }
    releases = [r for r in run.of_type("kubernetes:helm.sh/v3:Release") if "autoscaler" in r.name]
    assert releases
    for release in releases:
        key = next(
            k
            for (k, sa) in associations
            if sa == "cluster-autoscaler"
            and release.name.startswith(next(r["name"] for r in _regions(run) if r["key"] == k))
        )
        grant = associations[(key, "cluster-autoscaler")]
        assert grant.name in run.depends_on(release), release.name
        assert _waits_between(run, release, grant), release.name
    for consumer in run.of_type("kubernetes:apps/v1:Deployment") + run.of_type(
        "kubernetes:batch/v1:Job"
    ):
        sa = consumer.inputs["spec"]["template"]["spec"]["serviceAccountName"]
        matching = [
            a
            for (k, s), a in associations.items()
            if s == sa
            and consumer.name.startswith(next(r["name"] for r in _regions(run) if r["key"] == k))
        ]
        assert matching, (consumer.name, sa)
        assert _waits_between(run, consumer, matching[0]), consumer.name


def _regions(run: Any) -> list[dict[str, str]]:
    """Region name and logical-name key of each EKS cluster (`<key>-eks`, region input)."""
    return [
        {"name": c.inputs["region"], "key": c.name.removesuffix("-eks")}
        for c in run.of_type("aws:eks/cluster:Cluster")
    ]


# --- deployer connectivity: a way into the private APIs, or a stop at preview -------------


def _without_deployer(stem: str) -> str:
    """The bundled blueprint with its kubernetes.deployer block removed."""
    lines = (BLUEPRINTS / f"{stem}.yaml").read_text("utf-8").splitlines(keepends=True)
    out, skipping = [], False
    for line in lines:
        if line.startswith("  deployer:"):
            skipping = True
            continue
        if skipping and (line.startswith("    ") or line.startswith("  # ")):
            continue
        skipping = False
        out.append(line)
    text = "".join(out)
    assert "deployer:" not in text
    return text


@pytest.mark.parametrize("stem", sorted(FLEETS))
def test_a_private_api_without_a_deployer_path_stops_before_creating_anything(
    stem: str, root: Path
) -> None:
    from archform.verify.pulumi_mock import MockProgramError, run_program

    tree = programs.generate(_without_deployer(stem), root, f"{stem}-nodeployer")
    with pytest.raises(MockProgramError, match="nothing connects the deployer") as info:
        run_program(tree / FLEETS[stem][0])
    assert "deployerCidrs" in str(info.value) and "kubernetes.deployer.network" in str(info.value)


def test_eks_vpcs_attach_to_the_deployers_transit_gateway_per_region(root: Path) -> None:
    run = _run("platform-two-tier", root)
    attachments = run.of_type("aws:ec2transitgateway/vpcAttachment:VpcAttachment")
    assert {(a.inputs["region"], a.inputs["transitGatewayId"]) for a in attachments} == {
        ("us-east-1", "tgw-0a1b2c3d4e5f60718"),
        ("eu-west-1", "tgw-0b2c3d4e5f6071829"),
        ("ap-northeast-1", "tgw-0c3d4e5f607182930"),
    }
    routes = [r for r in run.of_type("aws:ec2/route:Route") if "transitGatewayId" in r.inputs]
    assert len(routes) == 3 * 3  # three private route tables per region, one deployer range
    assert {r.inputs["destinationCidrBlock"] for r in routes} == {"10.0.0.0/24"}
    for cluster in run.of_type("aws:eks/cluster:Cluster"):
        assert cluster.inputs["vpcConfig"]["endpointPublicAccess"] is False
    for provider in run.of_type("pulumi:providers:kubernetes"):
        key = provider.name.removesuffix("-k8s")
        assert f"{key}-deployer" in run.depends_on(provider), provider.name


def test_aks_vnets_peer_with_the_deployers_vnet(root: Path) -> None:
    run = _run("inference-3region-a10", root)
    peerings = run.of_type("azure-native:network:VirtualNetworkPeering")
    assert len(peerings) == 2 * 3, "both directions, every region"
    deployers = [p for p in peerings if p.name.endswith("-to-deployer")]
    assert {p.inputs["remoteVirtualNetwork"]["id"].rsplit("/", 1)[-1] for p in deployers} == {
        "deployers"
    }
    back = [p for p in peerings if p.name.endswith("-from-deployer")]
    assert {p.inputs["resourceGroupName"] for p in back} == {"ml-platform-ops"}
    for provider in run.of_type("pulumi:providers:kubernetes"):
        key = provider.name.removesuffix("-k8s")
        assert f"{key}-to-deployer" in run.depends_on(provider), provider.name


@pytest.mark.parametrize(
    ("change", "replacement", "marker", "message"),
    [
        (
            "    cidrs: [10.0.0.0/24]\n",
            "    cidrs: [192.168.0.0/24]\n",
            "192.168.0.0/24",
            "outside kubernetes.api_access_cidrs",
        ),
        (
            "    network:\n      us-east-1: tgw-0a1b2c3d4e5f60718\n"
            "      eu-west-1: tgw-0b2c3d4e5f6071829\n      ap-northeast-1: tgw-0c3d4e5f607182930\n",
            "    network: tgw-0a1b2c3d4e5f60718\n",
            "network: tgw-",
            "a transit gateway is regional",
        ),
        (
            "      eu-west-1: tgw-0b2c3d4e5f6071829\n",
            "      eu-west-1: vpc-0b2c3d4e5f6071829\n",
            "vpc-0b2c",
            "is not a transit gateway id",
        ),
    ],
    ids=["deployer-outside-api-cidrs", "one-transit-gateway-for-three-regions", "not-a-tgw"],
)
def test_a_deployer_path_that_cannot_reach_the_api_fails_at_its_line(
    change: str, replacement: str, marker: str, message: str, tmp_path: Path
) -> None:
    text = (BLUEPRINTS / "platform-two-tier.yaml").read_text("utf-8")
    assert text.count(change) == 1
    edited = text.replace(change, replacement)
    bad = tmp_path / "platform.yaml"
    bad.write_text(edited, "utf-8")
    proc = support.run_cli(["validate", str(bad)])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    number = next(i for i, ln in enumerate(edited.splitlines(), 1) if marker in ln)
    assert line.startswith(f"{bad}:{number}:"), line
    assert message in line and "(hint:" in line, line


# --- infrastructure only: the fleet program before any release exists ---------------------

CLUSTER_TYPES = {
    "aws": "aws:eks/cluster:Cluster",
    "azure": "azure-native:containerservice:ManagedCluster",
}


@pytest.mark.parametrize("stem", sorted(FLEETS))
def test_serve_false_brings_up_only_the_infrastructure(stem: str, root: Path) -> None:
    run = _run(stem, root, {"serve": "false"})
    provider = "azure" if stem == "inference-3region-a10" else "aws"
    assert run.of_type(CLUSTER_TYPES[provider])
    assert run.of_type("pulumi:providers:kubernetes")
    assert [r for r in run.resources if r.type.startswith("kubernetes:helm.sh")], "add-ons"
    for kind in (
        "apps/v1:Deployment",
        "batch/v1:Job",
        "core/v1:Service",
        "policy/v1:PodDisruptionBudget",
    ):
        assert not run.of_type(f"kubernetes:{kind}"), kind
    assert not [
        r for r in run.resources if r.type.startswith(("aws:globalaccelerator", "azure-native:cdn"))
    ]
    assert run.outputs["serving"]["state"] == "infrastructure-only"
    assert run.outputs["endpoints"] == {}


def test_every_azure_region_may_read_the_registry_account(root: Path) -> None:
    """The registry account is not the fleet's own: without Storage Blob Data Reader on it
    (scope = its resource id, from the blueprint) the stage Job's copy and the pods of a
    region serving straight from the registry fail with 403 (AuthorizationPermissionMismatch;
    learn.microsoft.com/azure/storage/blobs/assign-azure-role-data-access)."""
    import yaml

    raw = yaml.safe_load((BLUEPRINTS / "inference-3region-a10.yaml").read_text("utf-8"))
    account_id = raw["model"]["source_account_id"]
    run = _run("inference-3region-a10", root)
    reader = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
    on_registry = [
        a
        for a in run.of_type("azure-native:authorization:RoleAssignment")
        if a.inputs["scope"] == account_id
    ]
    assert on_registry and all(
        a.inputs["roleDefinitionId"].endswith(reader) for a in on_registry
    ), on_registry
    for region in raw["placement"]["regions"]:
        here = [a.name for a in on_registry if a.name.startswith(region)]
        # the replicator of every region copies from it; a region without a replica also
        # grants its kubelet (eastus serves the registry's own copy)
        assert any("replicator-source" in n for n in here), (region, here)
    assert any(a.name == "eastus-source-reader" for a in on_registry), on_registry
