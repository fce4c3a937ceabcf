"""Acceptance: blueprint edits and the impact class each must get."""

from __future__ import annotations

from typing import Any

import pytest
from ruamel.yaml import YAML

from archform.diff import Impact, diff_sets
from archform.spec import load_text
from diff.helpers import Mutate, diff_edit, dump
from support import BLUEPRINTS

D = list[dict[str, Any]]


def _set(doc: int, path: str, value: Any) -> Mutate:
    def mutate(docs: D) -> None:
        node: Any = docs[doc]
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        last = parts[-1]
        if last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _both(*mutations: Mutate) -> Mutate:
    def mutate(docs: D) -> None:
        for one in mutations:
            one(docs)

    return mutate


def _drop_deployer_network(doc: int, region: str) -> Mutate:
    """A region removed from the fleet loses its transit gateway entry (kubernetes.deployer)."""

    def mutate(docs: D) -> None:
        del docs[doc]["kubernetes"]["deployer"]["network"][region]

    return mutate


def _append(doc: int, path: str, value: Any) -> Mutate:
    def mutate(docs: D) -> None:
        node: Any = docs[doc]
        for part in path.split("."):
            node = node.setdefault(part, [])
        node.append(value)

    return mutate


def _delete(doc: int, path: str, index: int) -> Mutate:
    def mutate(docs: D) -> None:
        node: Any = docs[doc]
        for part in path.split("."):
            node = node[part]
        del node[index]

    return mutate


ONPREM = "onprem-h100-ib-lustre"
AWS = "aws-p5-efa-fsx"
GCP = "gcp-a3-mega-tcpxo"
AZURE = "azure-nd-h100-v5"
PLAT = "platform-two-tier"  # documents: 0 TrainingCluster, 1 InferenceFleet, 2 Platform
INP, ROL, NOD, DAT, OUT = (
    Impact.IN_PLACE,
    Impact.ROLLING_RESTART,
    Impact.NODE_REPLACEMENT,
    Impact.DATA_LOSS_RISK,
    Impact.CLUSTER_WIDE_OUTAGE,
)

# (id, blueprint, edit, changed path, expected impact)
CASES: list[tuple[str, str, Mutate, str, Impact]] = [
    ("nodes-32-to-48", ONPREM, _set(0, "compute.nodes", 48), "compute.nodes", INP),
    ("nodes-16-to-8", AWS, _set(0, "compute.nodes", 8), "compute.nodes", INP),
    ("fabric-kind-ib-to-roce", ONPREM, _set(0, "fabric.kind", "roce"), "fabric.kind", OUT),
    (
        "fabric-topology-kind",
        ONPREM,
        _set(0, "fabric.topology.kind", "fat_tree"),
        "fabric.topology.kind",
        OUT,
    ),
    (
        "lustre-capacity-decrease",
        ONPREM,
        _set(0, "storage.0.capacity_tib", 800),
        "storage[datasets].capacity_tib",
        DAT,
    ),
    (
        # issue 24 mutant: archform treats AMLFS as fixed-size, so growth is a new file system
        "amlfs-capacity-increase",
        AZURE,
        _set(0, "storage.0.capacity_tib", 128),
        "storage[datasets].capacity_tib",
        DAT,
    ),
    (
        "fsx-capacity-increase",
        AWS,
        _set(0, "storage.0.capacity_tib", 96),
        "storage[datasets].capacity_tib",
        INP,
    ),
    (
        "instance-type",
        AWS,
        _set(0, "compute.instance_type", "p4d.24xlarge"),
        "compute.instance_type",
        NOD,
    ),
    (
        "partition-added",
        AWS,
        _append(0, "scheduler.partitions", {"name": "debug", "max_time_hours": 2}),
        "scheduler.partitions[debug]",
        ROL,
    ),
    (
        "partition-time-limit",
        AWS,
        _set(0, "scheduler.partitions.0.max_time_hours", 24),
        "scheduler.partitions[train].max_time_hours",
        ROL,
    ),
    (
        "region-change",
        AWS,
        # a zone of the new region too: us-east-1a in us-west-2 does not validate
        _both(_set(0, "placement.region", "us-west-2"), _set(0, "placement.zones", ["us-west-2a"])),
        "placement.region",
        OUT,
    ),
    ("zone-change", AWS, _set(0, "placement.zones", ["us-east-1b"]), "placement.zones", OUT),
    (
        "network-cidr",
        AWS,
        _set(0, "placement.network", {"cidr": "10.50.0.0/16"}),
        "placement.network.cidr",
        OUT,
    ),
    ("slurm-major", AWS, _set(0, "scheduler.version", "24.11"), "scheduler.version", OUT),
    ("slurm-maintenance", AWS, _set(0, "scheduler.version", "24.05.3"), "scheduler.version", ROL),
    (
        "controller-instance",
        AWS,
        _set(0, "scheduler.controller_instance_type", "c6i.4xlarge"),
        "scheduler.controller_instance_type",
        OUT,
    ),
    ("storage-removed", AWS, _delete(0, "storage", 2), "storage[home]", DAT),
    (
        "storage-added",
        AWS,
        _append(
            0,
            "storage",
            {
                "name": "scratch",
                "kind": "lustre",
                "purpose": "scratch",
                "capacity_tib": 12,
                "throughput_mbps_per_tib": 250,
                "mount": "/fsx/scratch",
                "deployment": "scratch",
            },
        ),
        "storage[scratch]",
        INP,
    ),
    (
        "encryption-flip",
        AWS,
        _set(0, "storage.1.encrypted", False),
        "storage[checkpoints].encrypted",
        DAT,
    ),
    ("storage-kind", AWS, _set(0, "storage.2.kind", "lustre"), "storage[home].kind", DAT),
    (
        "storage-deployment",
        AWS,
        _set(0, "storage.1.deployment", "scratch"),
        "storage[checkpoints].deployment",
        DAT,
    ),
    (
        "throughput-tier",
        AWS,
        _set(0, "storage.1.throughput_mbps_per_tib", 250),
        "storage[checkpoints].throughput_mbps_per_tib",
        INP,
    ),
    ("purchase-option", AWS, _set(0, "compute.purchase", "on_demand"), "compute.purchase", NOD),
    # (AWS capacity blocks have no placement group either way: tests/diff/test_placement_impact.py)
    ("colocation", GCP, _set(0, "placement.colocation", "spread"), "placement.colocation", NOD),
    ("fabric-rails", ONPREM, _set(0, "fabric.rails", 4), "fabric.rails", NOD),
    ("fabric-gbps", ONPREM, _set(0, "fabric.gbps_per_node", 1600), "fabric.gbps_per_node", NOD),
    ("accounting", AWS, _set(0, "scheduler.accounting", False), "scheduler.accounting", ROL),
    (
        "health-checks",
        AWS,
        _set(0, "scheduler.health_checks", ["nhc"]),
        "scheduler.health_checks",
        ROL,
    ),
    ("containers", AWS, _set(0, "scheduler.containers", "none"), "scheduler.containers", ROL),
    ("description", AWS, _set(0, "description", "renamed"), "description", INP),
    ("labels", AWS, _set(0, "labels", {"team": "ml"}), "labels.team", INP),
    ("owner", AWS, _set(0, "owner", "research"), "owner", INP),
    (
        "lint-suppression",
        AWS,
        _set(0, "lint", {"ignore": [{"rule": "TRN003", "reason": "short research runs"}]}),
        "lint.ignore[TRN003]",
        INP,
    ),
    (
        "extra-group-added",
        AWS,
        _set(
            0,
            "compute.extra_groups",
            [{"name": "old", "nodes": 4, "instance_type": "p4d.24xlarge"}],
        ),
        "compute.extra_groups[old]",
        INP,
    ),
    (
        "fleet-server-image",
        PLAT,
        _set(1, "server.image", "vllm/vllm-openai:v0.6.4"),
        "server.image",
        ROL,
    ),
    (
        "fleet-tensor-parallel",
        PLAT,
        _set(1, "server.tensor_parallel", 2),
        "server.tensor_parallel",
        ROL,
    ),
    (
        "fleet-autoscaling-target",
        PLAT,
        _set(1, "autoscaling.target", 16),
        "autoscaling.target",
        ROL,
    ),
    (
        "fleet-max-nodes",
        PLAT,
        _set(1, "gpu_pool.max_nodes_per_region", 30),
        "gpu_pool.max_nodes_per_region",
        INP,
    ),
    (
        "fleet-min-nodes",
        PLAT,
        _set(1, "gpu_pool.min_nodes_per_region", 1),
        "gpu_pool.min_nodes_per_region",
        INP,
    ),
    (
        "fleet-instance-type",
        PLAT,
        _set(1, "gpu_pool.instance_type", "g5.48xlarge"),
        "gpu_pool.instance_type",
        NOD,
    ),
    (
        "fleet-region-added",
        PLAT,
        _both(
            _set(1, "placement.regions", ["us-east-1", "eu-west-1", "ap-northeast-1", "us-west-2"]),
            # a new region's VPC attaches to that region's transit gateway (kubernetes.deployer)
            _set(1, "kubernetes.deployer.network.us-west-2", "tgw-0d4e5f60718293a4b"),
        ),
        "placement.regions",
        INP,
    ),
    (
        "fleet-region-removed",
        PLAT,
        _both(
            _set(1, "placement.regions", ["us-east-1", "eu-west-1"]),
            _drop_deployer_network(1, "ap-northeast-1"),
        ),
        "placement.regions",
        OUT,
    ),
    ("fleet-traffic", PLAT, _set(1, "traffic.peak_rps", 900), "traffic.peak_rps", INP),
    # The edge: certificates reissued, listeners or servers changed; clients must follow.
    (
        "fleet-edge-domain",
        PLAT,
        _set(1, "edge.domain", "api.sivaro.example.com"),
        "edge.domain",
        ROL,
    ),
    ("fleet-edge-plain-http", PLAT, _set(1, "edge.protocol", "http"), "edge.protocol", ROL),
    ("fleet-edge-no-auth", PLAT, _set(1, "edge.auth", "none"), "edge.auth", ROL),
    ("fleet-k8s-downgrade", PLAT, _set(1, "kubernetes.version", "1.29"), "kubernetes.version", OUT),
    (
        "platform-registry-bucket",
        PLAT,
        # the Platform's fleet serves a version folder of its registry, so both move together
        _both(
            _set(2, "registry.bucket", "sivaro-models-v2"),
            _set(1, "model.source", "s3://sivaro-models-v2/sivaro-13b/2026-11-01/"),
        ),
        "registry.bucket",
        DAT,
    ),
    (
        "platform-promotion",
        PLAT,
        _set(2, "promotion.approval", "automatic"),
        "promotion.approval",
        INP,
    ),
]


@pytest.mark.parametrize(
    ("stem", "mutate", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_edit_gets_expected_impact(stem: str, mutate: Mutate, path: str, expected: Impact) -> None:
    report, _ = diff_edit(stem, mutate)
    found = {c.path: c for c in report.changes}
    assert path in found, f"{path} not among {sorted(found)}"
    change = found[path]
    assert change.impact == expected, change.reason
    assert change.reason and "\n" not in change.reason
    assert change.rule is not None, "a real policy row must cover this field"


def test_changes_are_listed_highest_impact_first() -> None:
    def several(docs: D) -> None:
        docs[0]["compute"]["nodes"] = 48
        docs[0]["fabric"]["kind"] = "roce"
        docs[0]["storage"][0]["capacity_tib"] = 800
        docs[0]["scheduler"] = {"accounting": False}

    report, _ = diff_edit(ONPREM, several)
    impacts = [c.impact for c in report.changes]
    assert impacts == sorted(impacts, reverse=True)
    assert report.highest == OUT
    assert {INP, ROL, DAT, OUT} <= set(impacts)


def test_unchanged_blueprint_has_no_changes_or_deltas() -> None:
    report, _ = diff_edit(AWS, lambda docs: None)
    assert report.changes == [] and report.resources == [] and report.costs == []
    assert report.highest is None


def test_reordered_named_lists_are_not_changes() -> None:
    report, _ = diff_edit(AWS, lambda docs: docs[0]["storage"].reverse())
    assert report.changes == []


def test_lustre_capacity_decrease_reason_says_why() -> None:
    report, _ = diff_edit(ONPREM, _set(0, "storage.0.capacity_tib", 800))
    (change,) = report.changes
    assert change.old == 1000 and change.new == 800
    assert "cannot shrink" in change.reason and "copied" in change.reason


@pytest.mark.parametrize(
    ("old", "new", "too_far"),
    [
        ("22.05", "23.11", False),  # two back: fine before 24.11
        ("22.05", "24.05", True),  # three back: 24.05 keeps state from two releases only
        ("23.02", "24.11", False),  # three back: fine from 24.11 on
        ("23.02", "25.05", True),  # four back
        ("24.05", "25.11", False),
    ],
)
def test_slurm_upgrade_beyond_the_compatibility_window_says_so(
    old: str, new: str, too_far: bool
) -> None:
    def both(docs: D) -> None:
        docs[0]["scheduler"]["version"] = new

    old_text = (BLUEPRINTS / "platform-two-tier.yaml").read_text("utf-8")
    old_text = old_text.replace('version: "24.05"', f'version: "{old}"')
    docs = list(YAML().load_all(old_text))
    both(docs)
    report = diff_sets(load_text(old_text, "old.yaml"), load_text(dump(docs), "new.yaml"))
    (change,) = report.changes
    assert change.impact == OUT
    assert ("upgrade in steps" in change.reason) is too_far, change.reason


def test_kubernetes_minor_upgrade_replaces_nodes() -> None:
    """1.35 -> 1.36: the bundled fleet is on the newest minor archform has add-on releases
    for (spec/data/addons.yaml), so the upgrade starts from a copy one minor older."""
    new_text = (BLUEPRINTS / f"{PLAT}.yaml").read_text("utf-8")
    line = 'kubernetes:\n  version: "1.36"'
    assert new_text.count(line) == 1
    old_text = new_text.replace(line, line.replace("1.36", "1.35"))
    report = diff_sets(load_text(old_text, "old.yaml"), load_text(new_text, "new.yaml"))
    found = {c.path: c for c in report.changes}
    assert "kubernetes.version" in found, sorted(found)
    assert found["kubernetes.version"].impact == NOD
