"""Node pools carry the control plane's Kubernetes version, so an upgrade reaches the nodes.

Without a version on the node group, EKS creates it at the cluster's version and then leaves
it there: a control-plane upgrade does not touch managed node groups ("Update the Kubernetes
version for your managed node group after the cluster",
https://docs.aws.amazon.com/eks/latest/userguide/update-managed-node-group.html). GKE node
pools and AKS agent pools likewise have their own version field
(https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster,
https://learn.microsoft.com/azure/aks/upgrade-aks-cluster). Each case runs the generated
program under mocks with the real provider SDKs and reads what it registered.
"""

from __future__ import annotations

import pytest

from support import programs
from support.fleet_cases import fleet_cases

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# One case per provider: the bundled fleets as written plus their retargeted variants.
CASES = [
    c
    for c in fleet_cases()
    if c.id
    in {
        "inference-3region-a10",
        "inference-h100-single-region",
        "inference-h100-single-region@gcp",
        "inference-3region-a10@aws",
    }
]


def _versions(run: object) -> tuple[set[str], list[tuple[str, object]]]:
    """(control-plane versions, [(pool, version)]) as registered."""
    planes: set[str] = set()
    pools: list[tuple[str, object]] = []
    for r in run.resources:  # type: ignore[attr-defined]
        if r.type == "aws:eks/cluster:Cluster":
            planes.add(r.inputs["version"])
        elif r.type == "aws:eks/nodeGroup:NodeGroup":
            pools.append((r.name, r.inputs.get("version")))
        elif r.type == "gcp:container/cluster:Cluster":
            planes.add(r.inputs["minMasterVersion"])
        elif r.type == "gcp:container/nodePool:NodePool":
            pools.append((r.name, r.inputs.get("version")))
        elif r.type == "azure-native:containerservice:ManagedCluster":
            planes.add(r.inputs["kubernetesVersion"])
            for p in r.inputs.get("agentPoolProfiles", []):
                pools.append((f"{r.name}/{p['name']}", p.get("orchestratorVersion")))
        elif r.type == "azure-native:containerservice:AgentPool":
            pools.append((r.name, r.inputs.get("orchestratorVersion")))
    return planes, pools


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_node_pool_is_pinned_to_the_control_plane(
    case: object, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tree = programs.generate(case.text, tmp_path_factory.getbasetemp() / "nodever", case.id)  # type: ignore[attr-defined]
    fleet_project = next(p for p in programs.projects(tree) if (p / "workload.py").exists())
    planes, pools = _versions(programs.run(fleet_project))
    assert len(planes) == 1, planes
    assert len(pools) >= 2, pools  # system pool + at least one GPU pool per region
    unpinned = [(name, v) for name, v in pools if v not in planes]
    assert not unpinned, f"node pools not on the control plane's version {planes}: {unpinned}"
