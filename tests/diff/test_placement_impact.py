"""Node-count changes judged by each provider's placement rules (diff/placement.py).

GCP compact placement: the generated program puts every compute VM under one COLLOCATED
policy whose vm_count is the node total; vm_count is ForceNew in terraform-provider-google's
schema (the bridge pulumi-gcp is built from) and pulumi-gcp's Instance.resource_policies
"Modifying this list will cause the instance to recreate", so a new total replaces every VM
(Cluster Toolkit forces the same: GoogleCloudPlatform/cluster-toolkit#1849). AWS cluster
placement groups have no size and Azure scale sets change capacity in place. The last tests
run the generated GCP program under Pulumi mocks for both versions, so the rule is tied to
what archform actually deploys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from archform.diff import Impact, diff_sets
from archform.spec import load_text
from diff.helpers import diff_edit, documents, dump
from support import BLUEPRINTS, run_cli

GCP = "gcp-a3-mega-tcpxo"
AWS = "aws-p5-efa-fsx"
AZURE = "azure-nd-h100-v5"
ONPREM = "onprem-h100-ib-lustre"
D = list[dict[str, Any]]


def _nodes(n: int) -> Any:
    def mutate(docs: D) -> None:
        docs[0]["compute"]["nodes"] = n

    return mutate


def _change(stem: str, mutate: Any, path: str) -> Any:
    report, _ = diff_edit(stem, mutate)
    found = [c for c in report.changes if c.path == path]
    assert found, [c.path for c in report.changes]
    return found[0]


def _extra_group(docs: D) -> None:
    base = docs[0]["compute"]
    docs[0]["compute"]["extra_groups"] = [
        {"name": "more", "nodes": 2, "instance_type": base["instance_type"]}
    ]


# The bundled GCP blueprint's NeMo layout (TP 4 x PP 4 x CP 2 = 32 GPUs) needs a multiple of
# 4 nodes of 8 GPUs, so the node counts below keep it dividing.
@pytest.mark.parametrize("nodes", [20, 8])
def test_gcp_compact_placement_node_change_replaces_every_node(nodes: int) -> None:
    change = _change(GCP, _nodes(nodes), "compute.nodes")
    assert change.impact is Impact.NODE_REPLACEMENT
    assert f"vm_count is the node total (16 -> {nodes})" in change.reason
    assert "every compute VM that references it is replaced" in change.reason
    assert "cluster-toolkit/pull/1849" in change.reason


def test_gcp_compact_placement_group_added_replaces_every_node() -> None:
    report, _ = diff_edit(GCP, _extra_group)
    added = next(c for c in report.changes if c.path == "compute.extra_groups[more]")
    assert added.impact is Impact.NODE_REPLACEMENT
    assert "(16 -> 18)" in added.reason


def test_gcp_without_compact_placement_node_change_is_in_place() -> None:
    old = documents(GCP)
    old[0]["placement"]["colocation"] = "none"
    new = documents(GCP)
    new[0]["placement"]["colocation"] = "none"
    new[0]["compute"]["nodes"] = 20
    report = diff_sets(load_text(dump(old), "old.yaml"), load_text(dump(new), "new.yaml"))
    (change,) = report.changes
    assert change.path == "compute.nodes"
    assert change.impact is Impact.IN_PLACE
    assert "no compact placement policy" in change.reason


@pytest.mark.parametrize(
    ("stem", "words"),
    [
        (AWS, "existing cluster placement group"),
        (AZURE, "scale set's capacity, changed in place"),
        (ONPREM, "new hosts are provisioned"),
    ],
)
def test_other_providers_change_node_count_in_place(stem: str, words: str) -> None:
    nodes = documents(stem)[0]["compute"]["nodes"]
    change = _change(stem, _nodes(nodes + 2), "compute.nodes")
    assert change.impact is Impact.IN_PLACE
    assert words in change.reason


def test_aws_node_change_warns_of_placement_group_capacity() -> None:
    change = _change(AWS, _nodes(24), "compute.nodes")
    assert "insufficient capacity" in change.reason


def test_cli_diff_says_node_replacement_for_a_gcp_compact_node_change(tmp_path: Path) -> None:
    docs = documents(GCP)
    docs[0]["compute"]["nodes"] = 24
    new = tmp_path / "new.yaml"
    new.write_text(dump(docs), encoding="utf-8")
    result = run_cli(["diff", str(BLUEPRINTS / f"{GCP}.yaml"), str(new)])
    assert result.returncode == 0, result.stderr
    assert "highest impact: node replacement" in result.stdout
    assert "compute.nodes: 16 -> 24" in result.stdout


# --- the rule against the generated program ------------------------------------------------


def _gcp_run(tmp_path: Path, key: str, nodes: int) -> Any:
    from support import programs

    docs = documents(GCP)
    docs[0]["compute"]["nodes"] = nodes
    tree = programs.generate(dump(docs), tmp_path, key)
    (project,) = [p for p in programs.projects(tree) if (p / "compute.py").is_file()]
    return programs.run(project)


@pytest.mark.integration
def test_generated_gcp_program_puts_every_vm_under_one_policy_sized_to_the_total(
    tmp_path: Path,
) -> None:
    old, new = _gcp_run(tmp_path, "gcp-16", 16), _gcp_run(tmp_path, "gcp-20", 20)
    for run, total in ((old, 16), (new, 20)):
        (policy,) = run.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
        group = policy.inputs["groupPlacementPolicy"]
        assert group == {"collocation": "COLLOCATED", "vmCount": total}
        gpu_vms = [
            r
            for r in run.of_type("gcp:compute/instance:Instance")
            if r.inputs.get("resourcePolicies")
        ]
        assert len(gpu_vms) == total
        assert {r.inputs["resourcePolicies"] for r in gpu_vms} == {f"https://mock/{policy.name}"}


# --- colocation: the verdict agrees with what the generated program does --------------------


def _generated(docs: D) -> dict[str, bytes]:
    from archform.render.generate import build_files

    files = build_files(load_text(dump(docs), "cluster.yaml"))
    return {f.path: f.content for f in files if f.path != "resolved-blueprint.yaml"}


@pytest.mark.parametrize("stem", [GCP, AWS, AZURE, ONPREM])
@pytest.mark.parametrize(("old", "new"), [("cluster", "spread"), ("spread", "none")])
def test_colocation_verdict_matches_the_generated_program(stem: str, old: str, new: str) -> None:
    before, after = documents(stem), documents(stem)
    before[0]["placement"]["colocation"] = old
    after[0]["placement"]["colocation"] = new
    report = diff_sets(load_text(dump(before), "old.yaml"), load_text(dump(after), "new.yaml"))
    (change,) = [c for c in report.changes if c.path == "placement.colocation"]
    unchanged = _generated(before) == _generated(after)
    assert (change.impact is Impact.IN_PLACE) is unchanged, (change.impact, change.reason)
    if not unchanged:
        assert change.impact is Impact.NODE_REPLACEMENT


def test_azure_colocation_change_says_nothing_changes() -> None:
    change = _change(
        AZURE, lambda d: d[0]["placement"].update(colocation="spread"), "placement.colocation"
    )
    assert change.impact is Impact.IN_PLACE
    assert "single placement group" in change.reason


# --- GCP static addresses: numbered in group order ----------------------------------------


def _gcp_two_groups(colocation: str, nodes: int, extra: int = 2) -> D:
    docs = documents(GCP)
    docs[0]["placement"]["colocation"] = colocation
    docs[0]["compute"]["nodes"] = nodes
    docs[0]["compute"]["extra_groups"] = [
        {"name": "more", "nodes": extra, "instance_type": docs[0]["compute"]["instance_type"]}
    ]
    return docs


def _addresses(docs: D) -> dict[str, list[str]]:
    from archform.providers.gcp.render.training import settings

    model = load_text(dump(docs), "cluster.yaml").documents[0].model
    return {g.name: g.addresses for g in settings(model)[0]["GROUPS"]}


def test_gcp_count_change_before_another_group_readdresses_it() -> None:
    old, new = _gcp_two_groups("none", 16), _gcp_two_groups("none", 20)
    assert _addresses(old)["more"] != _addresses(new)["more"]  # what the program does
    report = diff_sets(load_text(dump(old), "old.yaml"), load_text(dump(new), "new.yaml"))
    (change,) = report.changes
    assert change.impact is Impact.NODE_REPLACEMENT
    assert "static addresses of node group(s) more shift" in change.reason


def test_gcp_count_change_of_the_last_group_keeps_the_others_in_place() -> None:
    old, new = _gcp_two_groups("none", 16, 2), _gcp_two_groups("none", 16, 4)
    assert _addresses(old)["gpu"] == _addresses(new)["gpu"]
    report = diff_sets(load_text(dump(old), "old.yaml"), load_text(dump(new), "new.yaml"))
    (change,) = report.changes
    assert change.path == "compute.extra_groups[more].nodes"
    assert change.impact is Impact.IN_PLACE


def test_gcp_cpu_group_count_change_keeps_the_compact_policy() -> None:
    """A CPU debug group stays outside the COLLOCATED policy (vm_count counts GPU nodes), so
    resizing the last group, a CPU one, leaves every GPU VM in place."""

    def debug(n: int) -> Any:
        def mutate(docs: D) -> None:
            docs[0]["compute"]["extra_groups"] = [
                {"name": "debug", "nodes": n, "instance_type": "n2-standard-4"}
            ]

        return mutate

    old = documents(GCP)
    debug(2)(old)
    new = documents(GCP)
    debug(4)(new)
    report = diff_sets(load_text(dump(old), "old.yaml"), load_text(dump(new), "new.yaml"))
    (change,) = [c for c in report.changes if c.path.endswith(".nodes")]
    assert change.impact is Impact.IN_PLACE, change.reason
    # the same change on a GPU group replaces every VM
    gpu_old, gpu_new = documents(GCP), documents(GCP)
    _extra_group(gpu_old)
    _extra_group(gpu_new)
    gpu_new[0]["compute"]["extra_groups"][0]["nodes"] = 4
    gpu = diff_sets(load_text(dump(gpu_old), "old.yaml"), load_text(dump(gpu_new), "new.yaml"))
    (change,) = [c for c in gpu.changes if c.path.endswith(".nodes")]
    assert change.impact is Impact.NODE_REPLACEMENT
