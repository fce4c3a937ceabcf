"""The fleet namespace's NetworkPolicies on archform's own output, and that each cloud
enforces them (the programs under mocks): deny by default, allow what the pods need."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest
from test_capacity import A10, BUNDLED, H100, PLATFORM, _manifests, _run

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("netpol")


def _selects(policy: dict[str, Any], labels: dict[str, str]) -> bool:
    match = policy["spec"]["podSelector"].get("matchLabels") or {}
    return all(labels.get(k) == v for k, v in match.items())


def _egress_ports(policies: list[dict[str, Any]], labels: dict[str, str]) -> set[tuple[str, int]]:
    """(destination, port) pairs the policies selecting `labels` allow."""
    out = set()
    for p in policies:
        if not _selects(p, labels):
            continue
        for rule in p["spec"].get("egress", []):
            for to in rule.get("to", []):
                dest = (
                    to["ipBlock"]["cidr"]
                    if "ipBlock" in to
                    else to["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                )
                for port in rule["ports"]:
                    out.add((dest, port["port"]))
    return out


@pytest.mark.parametrize("stem", [A10, H100, PLATFORM])
def test_default_deny_then_exactly_the_needed_allowances(stem: str, tmp: Path) -> None:
    root, _ = _run(stem, tmp)
    policies = _manifests(root, "NetworkPolicy")
    regions = len(BUNDLED[stem]["placement"]["regions"])
    assert len(policies) == 3 * regions
    deny = [p for p in policies if p["metadata"]["name"] == "default-deny"]
    assert len(deny) == regions
    for p in deny:
        assert p["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    (dep,) = _manifests(root, "Deployment")[:1]
    (job,) = _manifests(root, "Job")[:1]
    server = dep["spec"]["template"]["metadata"]["labels"]
    stage = job["spec"]["template"]["metadata"]["labels"]
    port = dep["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    provider = BUNDLED[stem]["placement"]["provider"]
    identity = {
        "aws": {("169.254.170.23/32", 80)},  # EKS Pod Identity agent
        "azure": {("169.254.169.254/32", 80)},  # IMDS (az login --identity)
    }[provider]
    for labels in (server, stage):
        allowed = _egress_ports(policies, labels)
        assert ("kube-system", 53) in allowed  # cluster DNS
        assert ("0.0.0.0/0", 443) in allowed  # object storage and token endpoints
        assert identity <= allowed
        # nothing else: no plain HTTP out, no other ports
        others = allowed - {("kube-system", 53), ("0.0.0.0/0", 443)} - identity
        assert not others, others
        for dest, _ in allowed:
            if dest != "kube-system":
                net = ipaddress.ip_network(dest)
                assert net.prefixlen == 0 or net.prefixlen == 32
    # Ingress: the serving port (load balancer, probes, Prometheus), only to the servers.
    ingress = [
        rule
        for p in policies
        if _selects(p, server) and p["metadata"]["name"] != "default-deny"
        for rule in p["spec"].get("ingress", [])
    ]
    assert len(ingress) == regions  # one rule per region's model-server policy
    assert {json.dumps(r, sort_keys=True) for r in ingress} == {
        json.dumps({"ports": [{"protocol": "TCP", "port": port}]}, sort_keys=True)
    }  # from anywhere: the load balancer's traffic and health checks
    assert not [
        r
        for p in policies
        if _selects(p, stage) and p["metadata"]["name"] == "model-stage"
        for r in p["spec"].get("ingress", [])
    ]


@pytest.mark.parametrize("stem", [H100, PLATFORM])
def test_eks_vpc_cni_enforces_network_policies(stem: str, tmp: Path) -> None:
    _, run = _run(stem, tmp)
    addons = [r for r in run.of_type("aws:eks/addon:Addon") if r.inputs["addonName"] == "vpc-cni"]
    assert len(addons) == len(BUNDLED[stem]["placement"]["regions"])
    for a in addons:
        assert json.loads(a.inputs["configurationValues"])["enableNetworkPolicy"] == "true"
    # The serving objects (policies first) wait for the add-on.
    for pol in run.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy"):
        region = pol.name.split("-networkpolicy-")[0]
        assert any(n.endswith("-vpc-cni") for n in run.depends_on(pol)), (region, pol.name)


def test_aks_cilium_enforces_network_policies(tmp: Path) -> None:
    _, run = _run(A10, tmp)
    for c in run.of_type("azure-native:containerservice:ManagedCluster"):
        net = c.inputs["networkProfile"]
        assert net["networkPolicy"] == "cilium" and net["networkDataplane"] == "cilium"


def test_gke_dataplane_v2_enforces_network_policies(tmp: Path) -> None:
    _, run = _run("gcp-fleet", tmp)
    for c in run.of_type("gcp:container/cluster:Cluster"):
        assert c.inputs["datapathProvider"] == "ADVANCED_DATAPATH"


@pytest.mark.parametrize("stem", [A10, H100, PLATFORM])
def test_no_service_account_token_and_no_capabilities(stem: str, tmp: Path) -> None:
    root, _ = _run(stem, tmp)
    for sa in _manifests(root, "ServiceAccount"):
        assert sa["automountServiceAccountToken"] is False
    for kind in ("Deployment", "Job"):
        for obj in _manifests(root, kind):
            pod = obj["spec"]["template"]["spec"]
            assert pod["automountServiceAccountToken"] is False
            for c in pod.get("initContainers", []) + pod["containers"]:
                sc = c["securityContext"]
                assert sc["capabilities"] == {"drop": ["ALL"]}
                assert sc["allowPrivilegeEscalation"] is False
