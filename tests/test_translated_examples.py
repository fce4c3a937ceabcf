"""The hand translations in examples/ (Cluster Toolkit's a3-megagpu-8g Slurm blueprint and a
ParallelCluster p5 configuration) validate, lint clean and generate, and the generated
programs carry what the originals asked for (issue 21 item 8). The facts checked are the
originals' settings, quoted from the source files the blueprints name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from archform.render.generate import build_files
from archform.spec import TrainingCluster, load_paths
from support import ROOT, programs, run_cli

EXAMPLES = ROOT / "examples"
BLUEPRINTS = {
    "cluster-toolkit-a3mega": EXAMPLES / "cluster-toolkit-a3mega" / "blueprint.yaml",
    "parallelcluster-p5": EXAMPLES / "parallelcluster-p5" / "blueprint.yaml",
}


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
def test_example_validates_and_lints_clean(name: str) -> None:
    path = str(BLUEPRINTS[name])
    assert run_cli(["validate", path]).returncode == 0
    proc = run_cli(["lint", path, "--format", "json", "--fail-on", "info"])
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["findings"] == []


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
def test_example_generates(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli(["generate", str(BLUEPRINTS[name]), "-o", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert (out / "pulumi" / "__main__.py").is_file()
    assert (out / "ansible" / "site.yml").is_file()


def _files(name: str) -> dict[str, str]:
    loaded = load_paths([BLUEPRINTS[name]])
    return {f.path: f.content.decode() for f in build_files(loaded)}


def test_a3mega_has_debug_partition_high_scale_home_and_local_ssd() -> None:
    model = load_paths([BLUEPRINTS["cluster-toolkit-a3mega"]]).documents[0].model
    assert isinstance(model, TrainingCluster)
    assert model.placement.network.cidr == "172.16.0.0/16"  # the Toolkit's sys_net_range
    home, localssd, _ = model.storage
    assert (home.filestore_tier, home.capacity_tib) == ("HIGH_SCALE_SSD", 10)  # size_gb 10240
    assert localssd.capacity_tib == pytest.approx(6000 / 1024, abs=0.001)  # 16 x 375 GiB
    assert model.scheduler.health_checks == ["nhc", "dcgm"]
    conf = _files("cluster-toolkit-a3mega")["ansible/roles/slurm/files/slurm.conf"]
    assert "PartitionName=a3mega Nodes=a3mega-a3mega[001-016] Default=YES" in conf
    assert "PartitionName=debug Nodes=a3mega-debug[001-004] Default=NO" in conf
    assert "OverSubscribe=NO" in next(
        line for line in conf.splitlines() if line.startswith("PartitionName=debug")
    )


@pytest.mark.integration
@pytest.mark.slow
def test_a3mega_program_under_mocks(tmp_path: Path) -> None:
    run = _mock_run("cluster-toolkit-a3mega", tmp_path)
    (filestore,) = run.of_type("gcp:filestore/instance:Instance")
    assert filestore.inputs["tier"] == "HIGH_SCALE_SSD"
    assert filestore.inputs["fileShares"]["capacityGb"] == 10240
    instances = {i.name: i.inputs for i in run.of_type("gcp:compute/instance:Instance")}
    debug = [v for k, v in instances.items() if "-debug" in k]
    assert len(debug) == 4
    assert all(len(v["networkInterfaces"]) == 1 for v in debug)
    (policy,) = run.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"]["vmCount"] == 16


@pytest.mark.integration
@pytest.mark.slow
def test_p5_program_under_mocks(tmp_path: Path) -> None:
    run = _mock_run("parallelcluster-p5", tmp_path)
    (lt,) = [
        r for r in run.of_type("aws:ec2/launchTemplate:LaunchTemplate") if r.name.endswith("-gpu")
    ]
    assert lt.inputs["instanceType"] == "p5.48xlarge"
    assert len(lt.inputs["networkInterfaces"]) == 33  # ENA primary + 32 EFA-only
    (fsx,) = run.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert fsx.inputs["storageCapacity"] >= 4800


def _mock_run(name: str, tmp_path: Path) -> Any:
    out = tmp_path / name
    for f in build_files(load_paths([BLUEPRINTS[name]])):
        (out / f.path).parent.mkdir(parents=True, exist_ok=True)
        (out / f.path).write_bytes(f.content)
    return programs.run(out / "pulumi")
