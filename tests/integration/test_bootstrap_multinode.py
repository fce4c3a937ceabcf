"""Real three-node bootstrap: a controller and two compute nodes, each a network namespace
of this (root, Debian) machine, configured by `archform deploy` of the bundled on-prem smoke
blueprint scaled to two compute nodes; Slurm, an MPI job and validate.yml's per-node and
pair stages then span both nodes, and the deploy's acceptance phase fails naming the node
whose slurmd was stopped (its first step, archform.deploy.ready, asks every compute host's
slurmd and the controller's sinfo).

The nodes (tests/support/netns.py): `ip netns add` per node, a veth pair to the bridge
afbr0 (10.213.0.0/24), sshd on each node's address with a throwaway key; Ansible reaches them
over SSH like real machines (the generated inventory's `ansible_host`, the ssh connection).
Each node has its own host name, /etc (an overlay), /run, /sys, cgroup namespace, PID
namespace and Slurm/MUNGE state folders, so the generated roles run unchanged (the common
role writes every node's /etc/hosts and host name, the munge role copies the controller's
key, `slurmd -N` comes from the node's /etc/default/slurmd). The nodes share /usr: the
packages are the machine's (.ci/run installs them), as nodes booted from one image share them;
the nodes have no route off the bridge, so every package the roles ask for must be installed.
Ansible becomes root with sudo, as on real nodes (Debian containers lack it: .ci/run adds it).

The MPI job is mpi4py (Debian's python3-mpi4py on Open MPI 4.1) launched by
`srun --mpi=pmix` through Slurm's PMIx plugin: an allreduce over TCP between the namespaces.
validate.yml's stage 1 (per node) and stage 2 (ring of pairs) then run as its header
documents for nodes without GPUs, with tests/support/all_reduce_perf_cpu.py standing in for
nccl-tests' all_reduce_perf (a real MPI allreduce printed in nccl-tests' row format); one
node degraded on purpose (the stand-in sleeps there) must be the only node the report names.

Not reproducible without GPUs and fabric hardware, so not shown here: GPUDirect RDMA and
nvidia-peermem, NVLink/NVSwitch and NVLS, NCCL and nccl-tests bandwidth and the published
floors (a CPU all-reduce over veth says nothing about bus bandwidth; the stand-in's floor is
this test's, not a published figure), validate.yml's per-rail re-runs (NCCL_IB_HCA) and
stage 0's DCGM diagnostics and health watches, InfiniBand/RoCE/EFA verbs and rail alignment,
gres GPU binding, pyxis/enroot containers, and Lustre over LNet. Those tasks are skipped by
the hardware facts, as on any CPU node.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import support
from archform.deploy.phases import collections_path
from support.netns import NODE_DIR, NetnsCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow, *support.DAEMONS]

SMOKE = support.BLUEPRINTS / "onprem-cpu-smoke.yaml"
CONTROLLER, COMPUTE = "af-ctl", ["af-cpu1", "af-cpu2"]
TIMEOUT = 1500
# What the generated roles install for this blueprint (munge, slurm and pmix tasks). The
# nodes have no route off the bridge, so apt must find them installed (the image's packages).
PACKAGES = ("munge", "slurmctld", "slurmd", "slurm-client", "libpmix2", "libpmix-dev", "sudo")
STANDIN = Path(support.__file__).with_name("all_reduce_perf_cpu.py")
# The stand-in's floor (GB/s): no published figure exists for an MPI allreduce between two
# namespaces of one machine; far below what a healthy node measures here (memory and veth
# speed: 70-80 GB/s per node, 0.17 GB/s for the pair over veth and Open MPI's TCP transport
# on an idle 2-core machine), ten times what the degraded node can reach (4 MiB per 2 s).
FLOOR_GBYTES = 0.02
MPI_PROGRAM = (
    "from mpi4py import MPI; c = MPI.COMM_WORLD; "
    "print(c.Get_rank(), c.Get_size(), MPI.Get_processor_name(), c.allreduce(c.Get_rank() + 1))"
)


def _installed(package: str) -> bool:
    status = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Status}", package], capture_output=True, text=True
    )
    return status.stdout.endswith(" installed")


def _skip_or_fail(reason: str) -> None:
    if support.REQUIRE_TOOLS:
        pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
    pytest.skip(reason)


def _require() -> dict[str, str]:
    support.require_tool(
        "ip", "nsenter", "unshare", "ssh", "ssh-keygen", "sudo", "ansible-playbook"
    )
    support.require_module("ansible_runner")
    if os.geteuid() != 0:
        _skip_or_fail("the multi-node bootstrap makes namespaces and starts daemons: run as root")
    for daemon in ("/usr/sbin/sshd", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged"):
        if not Path(daemon).exists():
            _skip_or_fail(f"needs {daemon} (apt-get install openssh-server slurmctld slurmd munge)")
    missing = [p for p in PACKAGES if not _installed(p)]
    if missing:
        _skip_or_fail(f"the nodes have no route out: install {' '.join(missing)} first (.ci/run)")
    mpi = subprocess.run(
        ["/usr/bin/python3", "-c", "import mpi4py"], capture_output=True, check=False
    )
    if mpi.returncode != 0:
        _skip_or_fail("needs mpi4py for /usr/bin/python3 (apt-get install python3-mpi4py)")
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        _skip_or_fail(f"`ip netns` does not work here: {probe.stderr.strip()}")
    found = collections_path(support.ROOT)
    if found is None:
        _skip_or_fail("collections missing: run scripts/vendor-collections.sh")
    return {"ARCHFORM_COLLECTIONS_PATH": str(found)}


def _blueprint(cluster: NetnsCluster, path: Path) -> Path:
    """The bundled smoke blueprint with two compute nodes reached over SSH at the nodes'
    addresses (everything else as bundled)."""
    yaml = YAML()
    doc = yaml.load(SMOKE.read_text())
    by_name = {n.name: n.address for n in cluster.nodes}
    doc["compute"]["nodes"] = len(COMPUTE)
    doc["hosts"]["connection"] = "ssh"
    doc["hosts"]["controller"] = {"name": CONTROLLER, "address": by_name[CONTROLLER]}
    doc["hosts"]["compute"] = [{"name": n, "address": by_name[n]} for n in COMPUTE]
    with path.open("w") as handle:
        yaml.dump(doc, handle)
    return path


@pytest.fixture
def requirements() -> dict[str, str]:
    return _require()


@pytest.fixture
def cluster(requirements: dict[str, str], tmp_path: Path) -> Iterator[NetnsCluster]:
    nodes = NetnsCluster(tmp_path / "netns", [CONTROLLER, *COMPUTE])
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()


def _logs(cluster: NetnsCluster) -> str:
    out = []
    for node in cluster.nodes:
        for log in sorted(node.state.glob("log-*/*.log")):
            out.append(f"--- {node.name}: {log.name}\n" + log.read_text(errors="replace")[-1500:])
    return "\n".join(out)


def _validate(
    cluster: NetnsCluster, project: Path, env: dict[str, str], report: Path
) -> dict[str, Any]:
    """validate.yml's stages 1-2 (per node, pairs) as its header documents for nodes without
    GPUs, with the CPU stand-in; the report it writes."""
    for node in cluster.nodes:
        shutil.copy(STANDIN, node.state / STANDIN.name)
    tests = [{"name": "cpu", "algorithm": None, "floor_gbytes": FLOOR_GBYTES}]
    extra = {
        "validate_stages": "node,pairs",
        "validate_gpus": 1,
        "validate_srun_gpus": False,
        "archform_nccl_tests_bin": f"{NODE_DIR}/{STANDIN.name}",
        "validate_nccl_args": "-b 1M -e 4M -f 4",
        "validate_step_minutes": 5,
        "validate_node_tests": tests,
        "validate_pair_tests": tests,
        "validate_report_dir": str(report),
    }
    (project / "extra.json").write_text(json.dumps(extra))
    run_env = dict(os.environ, **env)
    run_env["ANSIBLE_CONFIG"] = str(project / "ansible.cfg")
    run_env["ANSIBLE_COLLECTIONS_PATH"] = env["ARCHFORM_COLLECTIONS_PATH"]
    run_env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + run_env.get("PATH", "")
    run = subprocess.run(
        ["ansible-playbook", "validate.yml", "-e", "@extra.json"],
        cwd=project,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    path = report / "report.json"
    assert path.is_file(), run.stdout[-4000:] + run.stderr
    result: dict[str, Any] = json.loads(path.read_text())
    assert (run.returncode == 0) == result["passed"], run.stdout[-4000:]
    return result


def test_three_node_namespace_bootstrap(
    requirements: dict[str, str], cluster: NetnsCluster, tmp_path: Path
) -> None:
    env = dict(requirements)
    env["ANSIBLE_PRIVATE_KEY_FILE"] = str(cluster.key)
    # This machine's root shell puts pyenv's shims first on PATH (/root/.bashrc), so Ansible's
    # interpreter discovery would pick a pyenv Python without python3-apt; a Debian node's
    # system Python is /usr/bin/python3.
    env["ANSIBLE_PYTHON_INTERPRETER"] = "/usr/bin/python3"
    env["ANSIBLE_SSH_COMMON_ARGS"] = (
        f"-o UserKnownHostsFile={cluster.known_hosts} -o IdentitiesOnly=yes"
    )
    blueprint = _blueprint(cluster, tmp_path / "smoke-3node.yaml")
    out = tmp_path / "tree"

    deploy = support.run_cli(["deploy", str(blueprint), "-o", str(out)], env=env, timeout=TIMEOUT)
    assert deploy.returncode == 0, deploy.stdout[-4000:] + deploy.stderr + _logs(cluster)
    assert "deploy finished" in deploy.stdout
    for host in (CONTROLLER, *COMPUTE):
        assert f"    {host}: ok=" in deploy.stdout, host

    # One job step on both compute nodes, launched from the controller.
    step = cluster.run(CONTROLLER, ["srun", "--nodes=2", "--time=1", "hostname"])
    assert step.returncode == 0, step.stderr + _logs(cluster)
    assert sorted(step.stdout.split()) == COMPUTE

    # MPI across both nodes, wired up by Slurm's PMIx plugin (no mpirun).
    mpi = cluster.run(
        CONTROLLER,
        ["srun", "--nodes=2", "--ntasks-per-node=1", "--mpi=pmix", "--time=2",
         "/usr/bin/python3", "-c", MPI_PROGRAM],
    )  # fmt: skip
    assert mpi.returncode == 0, mpi.stdout + mpi.stderr + _logs(cluster)
    ranks = sorted(line.split() for line in mpi.stdout.splitlines() if line.strip())
    # ranks 0 and 1 of 2, one per node, each seeing the allreduce sum 1 + 2
    assert [r[:2] for r in ranks] == [["0", "2"], ["1", "2"]], mpi.stdout
    assert sorted(r[2] for r in ranks) == COMPUTE, mpi.stdout
    assert {r[3] for r in ranks} == {"3"}, mpi.stdout

    # validate.yml's per-node and pair stages with the CPU stand-in for all_reduce_perf: a
    # healthy run passes, with the pair spanning both nodes; a degraded node is named.
    healthy = _validate(cluster, out / "ansible", env, tmp_path / "report-healthy")
    assert healthy["passed"] is True, healthy
    assert [p["nodes"] for p in healthy["pairs"]] == [COMPUTE], healthy
    assert healthy["pairs"][0]["results"][0]["busbw_gbytes"] >= FLOOR_GBYTES, healthy
    (cluster.node("af-cpu2").state / "degraded").write_text("stand-in fault\n")
    degraded = _validate(cluster, out / "ansible", env, tmp_path / "report-degraded")
    assert degraded["passed"] is False, degraded
    assert list(degraded["bad_nodes"]) == ["af-cpu2"], degraded
    assert degraded["bad_nodes"]["af-cpu2"][0].startswith("stage 1"), degraded
    summary = (tmp_path / "report-degraded" / "summary.txt").read_text()
    assert "af-cpu2" in summary and "af-cpu1" not in summary.split("bad nodes", 1)[-1], summary

    # One compute node loses its slurmd: the deploy's acceptance check must fail, naming it.
    stopped = cluster.run("af-cpu2", ["/usr/local/sbin/archform-service", "stop", "slurmd"])
    assert stopped.stdout.strip() == "stopped", stopped.stdout + stopped.stderr
    rejected = support.run_cli(
        ["deploy", str(blueprint), "-o", str(out), "--from", "acceptance"], env=env, timeout=TIMEOUT
    )
    report = rejected.stdout + rejected.stderr
    assert rejected.returncode != 0, report[-4000:]
    assert "acceptance failed: Slurm nodes not ready after" in report, report[-4000:]
    named = report.split("Slurm nodes not ready after", 1)[1].split("(", 1)[0]
    assert named.split(":", 1)[1].strip() == "af-cpu2", report[-4000:]  # only the stopped node
    assert "af-cpu2: slurmd not answering" in report, report[-4000:]
