"""The Ansible target: golden trees, determinism, version-aware Slurm files, NCCL per fabric."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import support
from archform.render.env import render
from archform.render.generate import build_files
from archform.render.targets.ansible import nccl, slurm_conf, target
from archform.render.targets.common.training_view import training_view
from archform.spec import load_paths
from archform.spec.models.training import TrainingCluster
from archform.verify.checks._projects import synthetic_outputs

FIXTURES = Path(__file__).parent / "fixtures"
GOLDENS = support.GOLDENS / "ansible"


def _clusters() -> list[tuple[str, TrainingCluster]]:
    out = []
    for path in support.bundled_blueprints():
        for doc in load_paths([path]).documents:
            if isinstance(doc.model, TrainingCluster) and doc.model.scheduler.kind == "slurm":
                out.append((path.stem, doc.model))
    return out


CLUSTERS = _clusters()


def _cluster(stem: str) -> TrainingCluster:
    return next(c for s, c in CLUSTERS if s == stem)


def _files(cluster: TrainingCluster) -> dict[str, bytes]:
    return support.tree_bytes(target.render_cluster(cluster))


def _text(cluster: TrainingCluster, rel: str) -> str:
    return _files(cluster)[f"ansible/{rel}"].decode()


def _with(cluster: TrainingCluster, **changes: Any) -> TrainingCluster:
    """A copy with nested fields replaced, re-validated: changes like scheduler={'version': ..}."""
    data = cluster.model_dump(mode="json", exclude_none=True)
    for key, value in changes.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    return TrainingCluster.model_validate(data)


def test_every_bundled_training_blueprint_is_covered() -> None:
    stems = {s for s, _ in CLUSTERS}
    assert {
        "onprem-cpu-smoke",
        "onprem-h100-ib-lustre",
        "aws-p5-efa-fsx",
        "gcp-a3-mega-tcpxo",
        "azure-nd-h100-v5",
        "platform-two-tier",
    } <= stems


@pytest.mark.parametrize(("stem", "cluster"), CLUSTERS, ids=[s for s, _ in CLUSTERS])
def test_golden_tree(stem: str, cluster: TrainingCluster, update_goldens: bool) -> None:
    support.compare_tree(_files(cluster), GOLDENS / stem, update_goldens)


@pytest.mark.parametrize(("stem", "cluster"), CLUSTERS, ids=[s for s, _ in CLUSTERS])
def test_rendering_twice_gives_identical_bytes(stem: str, cluster: TrainingCluster) -> None:
    assert _files(cluster) == _files(cluster)


def test_generate_core_puts_the_project_under_ansible() -> None:
    loaded = load_paths([support.BLUEPRINTS / "onprem-cpu-smoke.yaml"])
    paths = [f.path for f in build_files(loaded)]
    assert "ansible/site.yml" in paths and "ansible/inventory/hosts.yml" in paths
    assert "ansible/inventory/archform_inventory.py" not in paths


def test_inference_documents_get_no_training_ansible_project() -> None:
    # A fleet gets only its smoke-and-load playbook (fleet target), never site.yml or Slurm.
    loaded = load_paths([support.BLUEPRINTS / "inference-h100-single-region.yaml"])
    paths = [f.path for f in build_files(loaded)]
    assert "ansible/site.yml" not in paths
    assert not any(p.startswith("ansible/roles/") for p in paths)
    assert "ansible/smoke.yml" in paths


def test_node_lines_carry_real_cpu_memory_and_gres() -> None:
    conf = _text(_cluster("onprem-h100-ib-lustre"), "roles/slurm/files/slurm.conf")
    assert (
        "NodeName=llm-pretrain-gpu[001-032] Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 "
        "RealMemory=1992295 Gres=gpu:h100:8"
    ) in conf
    for line in (
        "SelectType=select/cons_tres",
        "GresTypes=gpu",
        "PrologFlags=Alloc,Contain",
        "TaskPlugin=task/cgroup,task/affinity",
        "ProctrackType=proctrack/cgroup",
        "AccountingStorageTRES=gres/gpu,gres/gpu:h100",
        "PartitionName=train Nodes=llm-pretrain-gpu[001-032] Default=YES MaxTime=4320 "
        "OverSubscribe=EXCLUSIVE State=UP",
    ):
        assert line in conf.splitlines(), line
    assert "State=UNKNOWN" in conf and "State=CLOUD" not in conf


def test_gres_conf_is_explicit_and_cgroup_constrains_devices() -> None:
    cluster = _cluster("aws-p5-efa-fsx")
    assert (
        "NodeName=aws-p5-train-gpu[001-016] AutoDetect=off Name=gpu Type=h100 File=/dev/nvidia[0-7]"
    ) in _text(cluster, "roles/slurm/files/gres.conf")
    cgroup = _text(cluster, "roles/slurm/files/cgroup.conf")
    assert "ConstrainDevices=YES" in cgroup
    assert "CgroupAutomount" not in cgroup and "AllowedKmemSpace" not in cgroup


@pytest.mark.parametrize(
    ("version", "plugin"),
    [
        ("22.05", "topology/none"),
        ("23.02", "topology/none"),
        ("23.11", "topology/default"),
        ("24.11", "topology/default"),
        ("25.05", "topology/flat"),
        ("25.11", "topology/flat"),
    ],
)
def test_flat_topology_plugin_name_follows_the_version(version: str, plugin: str) -> None:
    cluster = _with(
        _cluster("aws-p5-efa-fsx"),
        scheduler={"version": version},
        fabric={"topology": {"kind": "flat"}},
    )
    files = _files(cluster)
    assert f"TopologyPlugin={plugin}" in files["ansible/roles/slurm/files/slurm.conf"].decode()
    assert "ansible/roles/slurm/files/topology.conf" not in files


def test_block_topology_uses_block_sizes_from_24_05_and_tree_before_23_11() -> None:
    base = _with(
        _cluster("aws-p5-efa-fsx"),
        compute={"nodes": 72},
        fabric={"topology": {"kind": "block", "block_size": 18}},
    )
    new = _text(_with(base, scheduler={"version": "24.05"}), "roles/slurm/files/topology.conf")
    assert "BlockName=block01 Nodes=aws-p5-train-gpu[001-018]" in new
    assert "BlockSizes=18,36,72" in new
    mid = _text(_with(base, scheduler={"version": "23.11"}), "roles/slurm/files/topology.conf")
    assert "BlockName=block04" in mid and "BlockSizes" not in mid and "BlockLevels" not in mid
    old = _with(base, scheduler={"version": "22.05"})
    assert "TopologyPlugin=topology/tree" in _text(old, "roles/slurm/files/slurm.conf")
    assert "SwitchName=spine Switches=block[01-04]" in _text(old, "roles/slurm/files/topology.conf")


def test_rail_optimized_fabric_gives_scalable_units_under_one_spine() -> None:
    topo = _text(_cluster("onprem-h100-ib-lustre"), "roles/slurm/files/topology.conf")
    assert topo.splitlines()[-3:] == [
        "SwitchName=su01 Nodes=llm-pretrain-gpu[001-016]",
        "SwitchName=su02 Nodes=llm-pretrain-gpu[017-032]",
        "SwitchName=spine Switches=su[01-02]",
    ]


def test_elastic_nodes_are_cloud_and_never_autodetect() -> None:
    cluster = _with(
        _cluster("aws-p5-efa-fsx"), scheduler={"elastic": True, "gres_autodetect": "nvml"}
    )
    conf = _text(cluster, "roles/slurm/files/slurm.conf")
    assert "State=CLOUD" in conf and "ResumeProgram=/etc/slurm/resume.sh" in conf
    gres = _text(cluster, "roles/slurm/files/gres.conf")
    assert "AutoDetect=off" in gres and "File=/dev/nvidia[0-7]" in gres
    static = _with(_cluster("aws-p5-efa-fsx"), scheduler={"gres_autodetect": "nvml"})
    assert "AutoDetect=nvml Name=gpu Type=h100 Count=8" in _text(
        static, "roles/slurm/files/gres.conf"
    )


def test_raw_slurm_conf_overrides_come_last_and_replace_defaults() -> None:
    cluster = _with(
        _cluster("aws-p5-efa-fsx"),
        scheduler={"slurm_conf": {"MpiDefault": "pmix", "SchedulerParameters": "bf_continue"}},
    )
    lines = [
        line
        for line in _text(cluster, "roles/slurm/files/slurm.conf").splitlines()
        if line and not line.startswith(("#", "NodeName", "Partition"))
    ]
    assert lines[-2:] == ["MpiDefault=pmix", "SchedulerParameters=bf_continue"]
    assert sum(line.startswith("MpiDefault=") for line in lines) == 1


def test_cpu_cluster_has_no_gres_and_no_accounting_gatherer() -> None:
    cluster = _cluster("onprem-cpu-smoke")
    files = _files(cluster)
    conf = files["ansible/roles/slurm/files/slurm.conf"].decode()
    assert "GresTypes" not in conf and "Gres=" not in conf
    assert "JobAcctGatherType" not in conf
    assert "AccountingStorageType=accounting_storage/none" in conf
    assert "ansible/roles/slurm/files/gres.conf" not in files


def test_infiniband_nccl_uses_exact_hca_names() -> None:
    conf = _text(_cluster("onprem-h100-ib-lustre"), "roles/nccl/files/nccl.conf")
    assert (
        "NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"
    ) in conf.splitlines()
    assert "NCCL_SOCKET_IFNAME==bond0" in conf.splitlines()
    assert "NCCL_CROSS_NIC=0" in conf.splitlines()  # rail-optimized fabric
    assert "NCCL_DEBUG" not in conf


def test_efa_nccl_has_no_legacy_variables() -> None:
    cluster = _cluster("aws-p5-efa-fsx")
    text = _text(cluster, "roles/nccl/files/nccl.conf") + _text(cluster, "roles/nccl/files/nccl.sh")
    assert "export FI_EFA_USE_HUGE_PAGE=0" in text
    for legacy in ("FI_PROVIDER", "NCCL_PROTO", "FI_EFA_USE_DEVICE_RDMA", "RDMAV_"):
        assert legacy not in text


def test_tcpxo_and_azure_get_their_vendor_settings() -> None:
    gcp = _cluster("gcp-a3-mega-tcpxo")
    assert "NCCL_FASTRAK_CTRL_DEV=enp0s12" in _text(gcp, "roles/nccl/files/nccl.conf")
    assert "/var/lib/tcpxo/lib64/nccl-env-profile.sh" in _text(gcp, "roles/nccl/files/nccl.sh")
    azure = _text(_cluster("azure-nd-h100-v5"), "roles/nccl/files/nccl.conf")
    assert "NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml" in azure


def test_roce_traffic_class_is_dscp_times_four() -> None:
    cluster = _with(
        _cluster("onprem-h100-ib-lustre"), fabric={"kind": "roce", "roce": {"dscp": 26}}
    )
    assert ("NCCL_IB_TC", 104) in nccl.nccl_conf(training_view(cluster))


def test_onprem_inventory_uses_host_ranges_and_says_addresses_are_missing() -> None:
    inv = _text(_cluster("onprem-h100-ib-lustre"), "inventory/hosts.yml")
    assert '"llm-pretrain-gpu[001:032]":' in inv and "ADDRESSES MUST BE FILLED IN" in inv
    smoke = _text(_cluster("onprem-cpu-smoke"), "inventory/hosts.yml")
    assert "ansible_connection: local" in smoke
    assert 'ansible_python_interpreter: "{{ ansible_playbook_python }}"' in smoke


def test_cloud_inventory_script_reads_pulumi_outputs(tmp_path: Path) -> None:
    cluster = _cluster("aws-p5-efa-fsx")
    files = target.render_cluster(cluster)
    script = next(f for f in files if f.path.endswith("archform_inventory.py"))
    assert script.mode == 0o755
    path = tmp_path / "inv.py"
    path.write_bytes(script.content)
    outputs = tmp_path / "out.json"
    outputs.write_text(json.dumps(synthetic_outputs(training_view(cluster))))
    env = dict(os.environ, ARCHFORM_PULUMI_OUTPUTS=str(outputs))
    proc = subprocess.run(
        [sys.executable, str(path), "--list"], env=env, capture_output=True, text=True, check=True
    )
    data = json.loads(proc.stdout)
    assert len(data["compute_gpu"]["hosts"]) == 16
    assert data["controller"]["hosts"] == ["aws-p5-train-ctl"]
    assert data["_meta"]["hostvars"]["aws-p5-train-gpu001"]["ansible_host"].startswith("127.")
    lustre = data["slurm_cluster"]["vars"]["archform_lustre_outputs"]
    assert set(lustre) == {"datasets", "checkpoints"}
    missing = subprocess.run(
        [sys.executable, str(path), "--list"],
        capture_output=True,
        text=True,
        env=dict(os.environ, ARCHFORM_PULUMI_OUTPUTS=str(tmp_path / "no.json")),
    )
    assert missing.returncode != 0 and "pulumi stack output --json" in missing.stderr


def test_group_vars_pin_versions_and_carry_the_blueprint() -> None:
    text = _text(_cluster("onprem-h100-ib-lustre"), "group_vars/all.yml")
    assert 'nvidia_driver_version: "570.172.08"' in text
    assert "nvidia_fabric_manager: true" in text
    assert '"stripe_count": 4' in text  # checkpoints: narrow striping


@pytest.mark.parametrize("nodes", [1024, 8192])
def test_large_clusters_stay_small(nodes: int) -> None:
    cluster = load_paths([FIXTURES / f"scale-{nodes}.yaml"]).documents[0].model
    assert isinstance(cluster, TrainingCluster)
    files = _files(cluster)
    total = sum(len(v) for v in files.values())
    assert total < 2_000_000
    assert len(files["ansible/roles/slurm/files/slurm.conf"]) < 4000
    view = training_view(cluster)
    assert len(slurm_conf.expected_leaves(view)) == nodes // 32


def test_slurm_templates_render_through_conf_filter_only() -> None:
    from archform.render.filters import FilterError

    ctx = target.context(_cluster("onprem-cpu-smoke"))
    bad = replace(ctx, slurm=replace(ctx.slurm, global_lines=[[("ClusterName", "a b")]]))
    with pytest.raises(FilterError):
        render("ansible/roles/slurm/files/slurm.conf.j2", bad)


@pytest.mark.parametrize(("stem", "cluster"), CLUSTERS, ids=[s for s, _ in CLUSTERS])
def test_fabric_files_ship_only_with_the_fabric_that_uses_them(
    stem: str, cluster: TrainingCluster
) -> None:
    """A fabric role file ships only when a task file this tree runs names it.

    roles/fabric/tasks/main.yml includes `<fabric_kind>.yml` (and peermem.yml); the other
    kinds' task files are never run, so their files (the TCPXO RxDM hook, the aperture udev
    rule) are dead weight on every other cluster.
    """
    files = _files(cluster)
    tasks = "ansible/roles/fabric/tasks/"
    run = {"main.yml", "peermem.yml", f"{cluster.fabric.kind}.yml"}
    text = "".join(files[tasks + name].decode() for name in sorted(run))
    shipped = [p for p in files if p.startswith("ansible/roles/fabric/files/")]
    for path in shipped:
        name = path.rsplit("/", 1)[1]
        assert f"src: {name}" in text, f"{stem} ships {name} but its fabric never installs it"
    used = {
        line.split("src:", 1)[1].strip()
        for line in text.splitlines()
        if line.strip().startswith("src:") and "{{" not in line
    }
    for name in used:
        assert f"ansible/roles/fabric/files/{name}" in files, f"{stem} lacks {name}"
