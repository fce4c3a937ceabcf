"""Cluster Toolkit blueprints read directly: findings at the blueprint's own line, errors, import.

Each file under cluster_toolkit/ is a Cluster Toolkit blueprint written here, with `# expect:`
/ `# must-not:` markers, or `# error: LINE:COL` on its first line when gcluster (or archform)
refuses it, exit 2 at that position (tests/spec/peers/harness.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archform.spec import load_paths, load_text
from archform.spec.discovery import is_blueprint_text
from archform.spec.peers import reader_for
from spec.peers.harness import assert_findings, assert_refused, round_trip, split
from support import run_cli

HERE = Path(__file__).parent / "cluster_toolkit"
FILES = sorted(HERE.glob("*.yaml"))
LINTED, REFUSED = split(FILES)


def test_at_least_eight_blueprints() -> None:
    assert len(FILES) >= 8


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_findings_at_the_blueprints_own_lines(path: Path) -> None:
    assert_findings(path)


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: p.stem)
def test_refused_blueprints_fail_at_their_line(path: Path) -> None:
    assert_refused(path)


def test_misspelt_key_exits_2_with_did_you_mean() -> None:
    proc = run_cli(["lint", str(HERE / "misspelt_key.yaml")])
    assert proc.returncode == 2
    assert "misspelt_key.yaml:14:9:" in proc.stderr and "'settings'" in proc.stderr


def test_vars_references_resolve_and_count_as_mapped() -> None:
    (doc,) = load_paths([HERE / "spot_nodeset_vars.yaml"]).documents
    assert doc.peer is not None
    assert doc.peer.mapped["compute"]["instance_type"] == "a3-megagpu-8g"
    assert doc.peer.mapped["compute"]["nodes"] == 8
    assert "vars.machine" not in {n.path for n in doc.peer.notes}
    assert "vars.project_id" in {n.path for n in doc.peer.notes}


def test_detected_by_content_not_name() -> None:
    text = (HERE / "a3mega_debug.yaml").read_text("utf-8")
    assert is_blueprint_text(text)
    (doc,) = load_text(text, "cluster.yml").documents
    assert doc.peer is not None and doc.peer.format == "cluster-toolkit"
    assert reader_for({"deployment_groups": []}) is not None


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_import_then_lint_gives_the_same_rule_codes(path: Path) -> None:
    source, imported, _ = round_trip(path)
    assert imported == source


def test_partitions_hold_the_nodesets_they_reference_or_use() -> None:
    (doc,) = load_paths([HERE / "partitions_hold_nodesets.yaml"]).documents
    assert doc.peer is not None
    train, debug = doc.peer.mapped["scheduler"]["partitions"]
    # `nodeset: [$(a3mega.nodeset)]` names the first nodeset (archform's group "gpu"); the
    # debug partition's `use: [debug]` feeds the debug nodeset's `nodeset` output into its
    # `nodeset` input (gcluster's useModule).
    assert (train["name"], train["groups"]) == ("train", ["gpu"])
    assert (debug["name"], debug["groups"]) == ("debug", ["debug"])
    assert doc.peer.origins[("scheduler", "partitions", 1, "groups", 0)].pos.line == 41


def test_a3_mega_without_gpu_vpcs_trains_over_the_system_nic() -> None:
    (doc,) = load_paths([HERE / "a3mega_no_gpu_networks.yaml"]).documents
    assert doc.peer is not None
    # a3-megagpu-8g: 8 GPU VPCs for GPUDirect-TCPXO, one 200 Gbps gVNIC on the system VPC
    # (https://cloud.google.com/compute/docs/gpus/gpudirect).
    assert doc.peer.mapped["fabric"] == {"kind": "ethernet", "gbps_per_node": 200}
    (with_nets,) = load_paths([HERE / "a3mega_debug.yaml"]).documents
    assert with_nets.peer is not None and "fabric" not in with_nets.peer.mapped


@pytest.mark.parametrize(
    ("name", "words"),
    [
        (
            "unknown_module_in_use.yaml",
            'unknown module id: "sysnett" (hint: did you mean "sysnet"?)',
        ),
        (
            "unknown_output.yaml",
            'module "sysnet" does not have output "subnet_self_link" '
            '(hint: did you mean "subnetwork_self_link"?)',
        ),
        (
            "later_group_reference.yaml",
            "references to outputs from other groups must be to earlier groups: sysnet is in "
            "a later group",
        ),
        ("undefined_var.yaml", 'module "nodeset" references unknown global variable "gpu_machine"'),
    ],
)
def test_references_fail_in_gclusters_words(name: str, words: str) -> None:
    assert words in assert_refused(HERE / name)


MODULE_OUTPUT_BLUEPRINT = """\
blueprint_name: outputs
vars:
  deployment_name: outputs
  region: us-central1
  zone: us-central1-a
deployment_groups:
  - group: cluster
    modules:
      - id: sysnet
        source: modules/network/vpc
      - id: startup
        source: modules/scripts/startup-script
      - id: gpunets
        source: modules/network/multivpc
      - id: nodeset
        source: community/modules/compute/schedmd-slurm-gcp-v6-nodeset
        use: [sysnet, gpunets]
        settings:
          machine_type: a3-megagpu-8g
          node_count_static: $(sysnet.network_name)
          startup_script: $(startup.startup_script)
"""


def test_a_module_output_is_reported_not_mapped_and_unknown_modules_pass_unchecked() -> None:
    (doc,) = load_text(MODULE_OUTPUT_BLUEPRINT, "bp.yaml").documents
    assert doc.peer is not None
    notes = {n.path: n.message for n in doc.peer.notes}
    # A whole-value output is a Terraform output, known only once deployed.
    count = "deployment_groups[0].modules[3].settings.node_count_static"
    assert "known only once deployed" in notes[count]
    # startup-script is not in archform's module table: its outputs are not checked.
    script = "deployment_groups[0].modules[3].settings.startup_script"
    assert "references startup.startup_script" in notes[script]
    assert doc.peer.mapped["compute"]["nodes"] == 1
