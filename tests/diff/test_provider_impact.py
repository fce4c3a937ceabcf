"""`archform diff` impact classes checked against how each provider applies the change.

Every case edits a bundled blueprint (or its variant on another cloud) through the real
loader, and where the claim is about the generated program, renders both versions.

Provider documentation the classes follow:
- GPU instance type: a pool's machine type cannot change in place; archform names GPU pools
  after their instance type, so Pulumi creates the new pool and then deletes the old one,
  whose nodes the provider drains:
  EKS https://docs.aws.amazon.com/eks/latest/userguide/delete-managed-node-group.html
  ("Before each instance is terminated, Amazon EKS sends a signal to drain"),
  GKE https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools#deleting_a_node_pool,
  AKS https://learn.microsoft.com/azure/aks/delete-node-pool (PodDisruptionBudgets are honoured
  unless --ignore-pod-disruption-budget; older AKS pages said no cordon and drain).
- Kubernetes version: one minor at a time, control plane first, then node pools
  (EKS https://docs.aws.amazon.com/eks/latest/userguide/update-cluster.html and
  update-managed-node-group.html; GKE https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades;
  AKS https://learn.microsoft.com/azure/aks/upgrade-aks-cluster "you can't skip minor versions").
- API endpoint private/public: EKS https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html
  (modify endpoint access on an existing cluster), GKE `gcloud container clusters update
  --enable-private-endpoint` (https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation),
  AKS https://learn.microsoft.com/azure/aks/private-clusters (private cluster chosen at creation).
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from ruamel.yaml import YAML

from archform.diff import Impact, diff_sets
from archform.render.targets.fleet.view import fleet_view
from archform.spec import InferenceFleet, load_text
from support.fleet_cases import bundled_fleets, variant

NOD, INP, OUT = Impact.NODE_REPLACEMENT, Impact.IN_PLACE, Impact.CLUSTER_WIDE_OUTAGE
FLEETS = dict(bundled_fleets())
AWS = FLEETS["platform-two-tier-sivaro-serve"]
AZURE = FLEETS["inference-3region-a10"]
GCP = variant(AWS, "gcp")
BY_PROVIDER = {"aws": AWS, "gcp": GCP, "azure": AZURE}


def _text(doc: dict[str, Any]) -> str:
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(doc, buf)
    return buf.getvalue()


def _diff(old: dict[str, Any], new: dict[str, Any], path: str) -> Any:
    report = diff_sets(load_text(_text(old), "old.yaml"), load_text(_text(new), "new.yaml"))
    found = [c for c in report.changes if c.path == path]
    assert found, [c.path for c in report.changes]
    return found[0]


def _edit(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = {**doc}
    for dotted, value in changes.items():
        node = out
        parts = dotted.split("__")
        for part in parts[:-1]:
            node[part] = dict(node.get(part) or {})
            node = node[part]
        node[parts[-1]] = value
    return out


def _fleet(doc: dict[str, Any]) -> InferenceFleet:
    model = load_text(_text(doc), "x.yaml").of_kind(InferenceFleet)[0].model
    assert isinstance(model, InferenceFleet)
    return model


OTHER_GPU = {"aws": "g4dn.12xlarge", "gcp": "a3-highgpu-8g", "azure": "Standard_NV36ads_A10_v5"}


@pytest.mark.parametrize("provider", sorted(BY_PROVIDER))
def test_gpu_type_change_rolls_pool_by_pool(provider: str) -> None:
    old = BY_PROVIDER[provider]
    new = _edit(old, gpu_pool__instance_type=OTHER_GPU[provider])
    new["gpu_pool"].pop("gpu", None)  # the catalog fills the GPU of the new type
    change = _diff(old, new, "gpu_pool.instance_type")
    assert change.impact == NOD
    assert "created beside the old one" in change.reason and "drained" in change.reason
    # What makes that true: the new pools have names the old ones do not (no collision, no
    # delete-first), and the system pool keeps its name (untouched).
    before = {p.name for p in fleet_view(_fleet(old)).gpu_pools}
    after = {p.name for p in fleet_view(_fleet(new)).gpu_pools}
    assert before and after and not before & after
    for name in before | after:  # AKS: 1-12 lowercase alphanumerics, starting with a letter
        assert re.fullmatch(r"[a-z][a-z0-9]{0,11}", name), name


def test_gpu_pool_names_are_stable_when_the_type_is() -> None:
    edited = _edit(AWS, gpu_pool__max_nodes_per_region=30)
    assert [p.name for p in fleet_view(_fleet(AWS)).gpu_pools] == [
        p.name for p in fleet_view(_fleet(edited)).gpu_pools
    ]
    assert _diff(AWS, edited, "gpu_pool.max_nodes_per_region").impact == INP


@pytest.mark.parametrize(
    ("provider", "words"),
    [
        ("aws", "EKS control plane is upgraded in place, then each managed node group"),
        ("gcp", "GKE control plane is upgraded"),
        ("azure", "AKS control plane is upgraded, then each agent pool"),
    ],
)
def test_one_minor_upgrade_is_control_plane_then_nodes(provider: str, words: str) -> None:
    old = _edit(BY_PROVIDER[provider], kubernetes__version="1.35")
    new = _edit(BY_PROVIDER[provider], kubernetes__version="1.36")
    change = _diff(old, new, "kubernetes.version")
    assert change.impact == NOD and words in change.reason


def test_skipping_a_minor_is_refused_and_downgrade_recreates() -> None:
    skip = _diff(
        _edit(AWS, kubernetes__version="1.34"),
        _edit(AWS, kubernetes__version="1.36"),
        "kubernetes.version",
    )
    assert skip.impact == NOD and "refused as written" in skip.reason and "skips 1" in skip.reason
    down = _diff(
        _edit(AWS, kubernetes__version="1.36"),
        _edit(AWS, kubernetes__version="1.35"),
        "kubernetes.version",
    )
    assert down.impact == OUT


@pytest.mark.parametrize(
    ("provider", "impact", "words"),
    [
        ("aws", INP, "EKS updates the endpoint access in place"),
        ("gcp", INP, "GKE updates the endpoint in place"),
        ("azure", OUT, "every regional cluster is recreated"),
    ],
)
def test_private_to_public_api_flip(provider: str, impact: Impact, words: str) -> None:
    old = _edit(BY_PROVIDER[provider], kubernetes__api_access_cidrs=["10.0.0.0/8"])
    # a public API: the deployer reaches the public endpoint, no deployer network
    new = _edit(
        BY_PROVIDER[provider],
        kubernetes__api_access_cidrs=["34.120.0.0/16"],
        kubernetes__deployer=None,
    )
    change = _diff(old, new, "kubernetes.api_access_cidrs")
    assert change.impact == impact and words in change.reason
    back = _diff(new, old, "kubernetes.api_access_cidrs")
    assert back.impact == impact and "becomes private" in back.reason


def test_allow_list_edit_within_private_ranges_is_in_place() -> None:
    old = _edit(AZURE, kubernetes__api_access_cidrs=["10.0.0.0/8"])
    new = _edit(AZURE, kubernetes__api_access_cidrs=["10.0.0.0/8", "172.16.0.0/12"])
    change = _diff(old, new, "kubernetes.api_access_cidrs")
    assert change.impact == INP and "access list is updated in place" in change.reason
