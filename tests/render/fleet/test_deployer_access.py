"""How the deployer reaches each cluster's API and holds cluster-admin, for every bundled
fleet (the Platform's fleet included) and the same fleets on the other clouds, read from
what the real provider SDKs registered under mocks, with and without bootstrap config.

Provider behaviour the assertions follow:
- EKS: the creator of a cluster with bootstrapClusterCreatorAdminPermissions is cluster
  admin; others need an access entry with AmazonEKSClusterAdminPolicy
  (https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html);
- AKS with Azure RBAC and local accounts disabled: nobody may call the API without an Azure
  role such as "Azure Kubernetes Service RBAC Cluster Admin"
  (https://learn.microsoft.com/azure/aks/manage-azure-rbac);
- GKE: roles/container.admin grants full Kubernetes API access
  (https://cloud.google.com/kubernetes-engine/docs/how-to/iam#predefined).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import support
from archform.render.generate import build_files
from support.fleet_cases import Case, fleet_cases

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CASES = [c for c in fleet_cases() if "@" not in c.id or c.id.startswith("platform-two-tier")]
BOOTSTRAP = {
    "deployerCidrs": json.dumps(["203.0.113.0/24"]),
    "deployerPrincipalArn": "arn:aws:iam::000000000000:role/deployer",
    "deployerObjectId": "00000000-0000-0000-0000-0000000000aa",
    "deployerMember": "serviceAccount:deployer@proj.iam.gserviceaccount.com",
}
AKS_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"


def _run(case: Case, tmp: Path, config: dict[str, str]) -> tuple[Any, Any]:
    support.require_module("pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native")
    from archform.verify.pulumi_mock import run_program

    fleet, blueprints = case.load()
    for f in build_files(blueprints):  # type: ignore[arg-type]
        path = tmp / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.content)
    project = tmp / "pulumi" if (tmp / "pulumi").is_dir() else tmp / fleet.name / "pulumi"
    return fleet, run_program(project, config)


def _providers(run: Any) -> list[Any]:
    return run.of_type("pulumi:providers:kubernetes")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_private_by_default_with_the_creator_as_admin(case: Case, tmp_path: Path) -> None:
    fleet, run = _run(case, tmp_path, {})
    provider = fleet.placement.provider
    access = run.outputs["deployer_access"]
    assert access["cluster_admin"], access
    assert "private" in access["api"]
    if provider == "aws":
        for c in run.of_type("aws:eks/cluster:Cluster"):
            assert c.inputs["accessConfig"] == {
                "authenticationMode": "API",
                "bootstrapClusterCreatorAdminPermissions": True,
            }
            assert c.inputs["vpcConfig"]["endpointPublicAccess"] is False
    elif provider == "azure":
        clusters = run.of_type("azure-native:containerservice:ManagedCluster")
        admins = [
            a
            for a in run.of_type("azure-native:authorization:RoleAssignment")
            if a.inputs["roleDefinitionId"].endswith(AKS_ADMIN)
        ]
        assert len(admins) == len(clusters)
        # the identity running pulumi (client config) unless deployerObjectId says otherwise
        assert {a.inputs["principalId"] for a in admins} == {"00000000-0000-0000-0000-00000000000d"}
        for k8s in _providers(run):
            assert any(d.endswith("-deployer-admin") for d in run.depends_on(k8s)), k8s.name
        # BYO VNet: the cluster identity manages its load balancers in it
        network = [
            a
            for a in run.of_type("azure-native:authorization:RoleAssignment")
            if a.inputs["roleDefinitionId"].endswith("4d97b98b-1d4f-4787-a291-c67834d212e7")
        ]
        assert len(network) == len(clusters)
        for c in clusters:
            assert c.inputs["disableLocalAccounts"] is True
            assert c.inputs["aadProfile"]["enableAzureRBAC"] is True
        # the blueprint's VNet CIDRs are used, one per region
        vnets = run.of_type("azure-native:network:VirtualNetwork")
        assert sorted(v.inputs["addressSpace"]["addressPrefixes"][0] for v in vnets) == sorted(
            f"10.{100 + i}.0.0/16" for i in range(len(fleet.placement.all_regions))
        )
    else:
        for c in run.of_type("gcp:container/cluster:Cluster"):
            assert c.inputs["privateClusterConfig"]["enablePrivateEndpoint"] is True


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bootstrap_opens_the_api_to_the_deployer_only(case: Case, tmp_path: Path) -> None:
    fleet, run = _run(case, tmp_path, BOOTSTRAP)
    provider = fleet.placement.provider
    access = run.outputs["deployer_access"]
    assert "203.0.113.0/24" in access["api"]
    if provider == "aws":
        for c in run.of_type("aws:eks/cluster:Cluster"):
            assert c.inputs["vpcConfig"]["endpointPublicAccess"] is True
            assert c.inputs["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
        assoc = run.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
        assert len(assoc) == len(fleet.placement.all_regions)
        for a in assoc:
            assert a.inputs["policyArn"].endswith(
                ":cluster-access-policy/AmazonEKSClusterAdminPolicy"
            )
            assert a.inputs["principalArn"] == BOOTSTRAP["deployerPrincipalArn"]
            assert a.inputs["accessScope"] == {"type": "cluster"}
        for k8s in _providers(run):
            assert any(d.endswith("-deployer") for d in run.depends_on(k8s)), k8s.name
    elif provider == "azure":
        for c in run.of_type("azure-native:containerservice:ManagedCluster"):
            assert c.inputs["apiServerAccessProfile"] == {"authorizedIPRanges": ["203.0.113.0/24"]}
        admins = [
            a
            for a in run.of_type("azure-native:authorization:RoleAssignment")
            if a.inputs["roleDefinitionId"].endswith(AKS_ADMIN)
        ]
        assert {a.inputs["principalId"] for a in admins} == {BOOTSTRAP["deployerObjectId"]}
    else:
        for c in run.of_type("gcp:container/cluster:Cluster"):
            assert c.inputs["privateClusterConfig"]["enablePrivateEndpoint"] is False
            nets = [
                b["cidrBlock"] for b in c.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"]
            ]
            assert "203.0.113.0/24" in nets and "0.0.0.0/0" not in nets
        members = run.of_type("gcp:projects/iAMMember:IAMMember")
        assert any(
            m.inputs["role"] == "roles/container.admin"
            and m.inputs["member"] == BOOTSTRAP["deployerMember"]
            for m in members
        )


def test_the_internet_is_not_a_deployer_network(tmp_path: Path) -> None:
    from archform.verify.pulumi_mock import MockProgramError

    with pytest.raises(MockProgramError, match="not the internet"):
        _run(CASES[0], tmp_path, {"deployerCidrs": json.dumps(["0.0.0.0/0"])})


def test_plan_shows_how_the_deployer_reaches_the_api() -> None:
    support.require_module("pulumi", "pulumi_aws", "pulumi_kubernetes")
    proc = support.run_cli(
        ["plan", str(support.BLUEPRINTS / "platform-two-tier.yaml"), "--name", "sivaro-serve"],
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "deployer access:" in proc.stdout
    assert "private endpoint only" in proc.stdout
    assert "EKS cluster creator admin" in proc.stdout
