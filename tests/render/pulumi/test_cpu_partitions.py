"""A CPU node group (a debug partition) beside the GPU nodes on every cloud: its own Slurm
partition, and instances without the GPU fabric, run under mocks with the real SDKs (issue 21
item 8). Cluster Toolkit's a3-megagpu-8g blueprint has such a partition (`debug_nodeset`,
n2-standard-2, beside the A3 Mega nodeset); ParallelCluster queues mix CPU and GPU compute
resources the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support import programs

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLOUDS = {
    "gcp": ("us-central1", "[us-central1-a]", "a3-megagpu-8g", "n2-standard-4"),
    "aws": ("us-east-1", "[us-east-1a]", "p5.48xlarge", "m6i.2xlarge"),
    "azure": ("eastus", "[]", "Standard_ND96isr_H100_v5", "Standard_D8s_v5"),
}
TEXT = """\
version: 1
kind: TrainingCluster
name: mix
placement: {{provider: {p}, region: {region}, zones: {zones}}}
compute:
  nodes: 2
  instance_type: {gpu}
  extra_groups:
    - {{name: debug, nodes: 3, instance_type: {cpu}}}
scheduler:
  partitions:
    - {{name: gpu, default: true, groups: [gpu]}}
    - {{name: debug, exclusive: false, max_time_hours: 2, groups: [debug]}}
"""


def _tree(provider: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    region, zones, gpu, cpu = CLOUDS[provider]
    text = TEXT.format(p=provider, region=region, zones=zones, gpu=gpu, cpu=cpu)
    return programs.generate(text, tmp_path_factory.getbasetemp() / "cpu-parts", provider)


def _run(tree: Path) -> Any:
    (project,) = programs.projects(tree)
    return programs.run(project)


@pytest.mark.parametrize("provider", sorted(CLOUDS))
def test_debug_partition_holds_only_the_cpu_nodes(
    provider: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    conf = (_tree(provider, tmp_path_factory) / "ansible/roles/slurm/files/slurm.conf").read_text()
    lines = conf.splitlines()
    debug = next(line for line in lines if line.startswith("NodeName=mix-debug"))
    assert "Gres=" not in debug
    assert next(line for line in lines if line.startswith("NodeName=mix-gpu")).count("Gres=gpu")
    assert "PartitionName=debug Nodes=mix-debug[001-003] Default=NO MaxTime=120" in conf
    assert "OverSubscribe=NO" in next(x for x in lines if x.startswith("PartitionName=debug"))
    assert "PartitionName=gpu Nodes=mix-gpu[001-002] Default=YES" in conf


def test_gcp_cpu_nodes_get_the_system_nic_only_and_no_compact_policy(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    run = _run(_tree("gcp", tmp_path_factory))
    instances = {i.name: i.inputs for i in run.of_type("gcp:compute/instance:Instance")}
    debug = [v for k, v in instances.items() if "-debug" in k]
    gpus = [v for k, v in instances.items() if "-gpu" in k]
    assert len(debug) == 3 and len(gpus) == 2
    for inst in debug:
        assert inst["machineType"] == "n2-standard-4"
        assert len(inst["networkInterfaces"]) == 1
        assert inst["scheduling"]["onHostMaintenance"] == "MIGRATE"
        assert not inst.get("resourcePolicies")
    for inst in gpus:
        assert len(inst["networkInterfaces"]) == 9
        assert inst["scheduling"]["onHostMaintenance"] == "TERMINATE"
    (policy,) = run.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"]["vmCount"] == 2


def test_aws_cpu_nodes_get_one_ena_interface_outside_the_placement_group(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    run = _run(_tree("aws", tmp_path_factory))
    templates = {t.name: t.inputs for t in run.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    debug = templates["mix-debug"]
    assert [n.get("interfaceType", "interface") for n in debug["networkInterfaces"]] == [
        "interface"
    ]
    assert "groupName" not in debug["placement"]
    assert "groupName" in templates["mix-gpu"]["placement"]
    assert len(templates["mix-gpu"]["networkInterfaces"]) == 33  # ENA primary + 32 EFA-only


def test_azure_cpu_nodes_are_their_own_scale_set(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    run = _run(_tree("azure", tmp_path_factory))
    sets = {v.name: v.inputs for v in run.of_type("azure-native:compute:VirtualMachineScaleSet")}
    (debug,) = [v for k, v in sets.items() if "debug" in k]
    assert debug["sku"]["name"] == "Standard_D8s_v5" and debug["sku"]["capacity"] == 3
