"""Real bootstrap: the generated playbooks turn this (root, Debian) machine into a one-node
Slurm cluster with ansible-runner, run a job, and are idempotent on a second run; then
validate.yml passes, and fails naming the node once it is drained. Finally the generated
node scripts (DCGM prolog/epilog, NCCL TaskProlog, enroot.conf on local NVMe, the local NVMe
boot unit across a simulated reboot and stop/start on a loop device standing in for the
instance-store disk) run under this cluster's Slurm around real jobs
(tests/bootstrap_node_scripts.py, which names its stand-ins and their vendor sources)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bootstrap_node_scripts
import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow, *support.DAEMONS]

SMOKE = support.BLUEPRINTS / "onprem-cpu-smoke.yaml"
HELPER = Path("/usr/local/sbin/archform-service")
# Tasks that only make sense on GPU nodes; on this machine the hardware facts skip them.
GPU_TASKS = (
    "Install the pinned driver (open kernel modules)",
    "Install DCGM unless the image carries it",
    "Install /etc/nccl.conf",
)


def _require_root_debian() -> None:
    support.require_tool("apt-get", "dpkg-query", "ansible-playbook", "srun")
    # The loop-device stand-in for instance-store NVMe (tests/enroot_standin.py).
    support.require_tool("losetup", "mkfs.xfs", "wipefs", "blkid", "mountpoint")
    support.require_module("ansible_runner")
    if os.geteuid() != 0:
        if support.REQUIRE_TOOLS:
            pytest.fail("ARCHFORM_REQUIRE_TOOLS=1 but the bootstrap test must run as root")
        pytest.skip("the bootstrap test installs packages and starts daemons: run as root")


def _collections() -> str:
    from archform.verify.checks.ansible import collections_path

    found = collections_path()
    if found is None:
        if support.REQUIRE_TOOLS:
            pytest.fail("collections missing: run scripts/vendor-collections.sh")
        pytest.skip("collections missing: run scripts/vendor-collections.sh")
    return found


def _run_site(
    project: Path, workdir: Path, collections: str, playbook: str = "site.yml", timeout: int = 1500
) -> Any:
    import ansible_runner

    workdir.mkdir(parents=True)  # fresh private_data_dir: runner persists cmdline in it
    env = {
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "ANSIBLE_COLLECTIONS_PATH": collections,
        "ANSIBLE_CONFIG": str(project / "ansible.cfg"),
        "HOME": str(workdir.parent / "home"),
        "ANSIBLE_NOCOLOR": "1",
    }
    return ansible_runner.run(
        private_data_dir=str(workdir),
        project_dir=str(project),
        playbook=playbook,
        inventory=str(project / "inventory" / "hosts.yml"),
        envvars=env,
        quiet=True,
        timeout=timeout,
    )


def _output(result: Any) -> str:
    """The run's stdout, read from its artifact file (runner's own handle stays unopened)."""
    return (Path(result.config.artifact_dir) / "stdout").read_text(errors="replace")


def _stop_daemons() -> None:
    if HELPER.exists():
        for daemon in ("slurmd", "slurmctld", "munge"):
            subprocess.run(
                [str(HELPER), "stop", daemon], check=False, timeout=60, capture_output=True
            )


def test_site_yml_bootstraps_slurm_runs_a_job_and_is_idempotent(tmp_path: Path) -> None:
    _require_root_debian()
    collections = _collections()
    loaded = load_paths([SMOKE])
    write_tree(tmp_path / "tree", build_files(loaded))
    project = tmp_path / "tree" / "ansible"
    try:
        first = _run_site(project, tmp_path / "run1", collections)
        assert first.status == "successful", _output(first)[-4000:]
        assert first.rc == 0

        skipped = {
            e["event_data"].get("task")
            for e in first.events
            if e.get("event") == "runner_on_skipped"
        }
        for task in GPU_TASKS:
            assert task in skipped, f"{task!r} was not skipped by the hardware facts"
        facts_task = [
            e
            for e in first.events
            if e.get("event") == "runner_on_ok"
            and e["event_data"].get("task") == "Show the hardware this host has"
        ]
        assert facts_task and "'nvidia_gpus': 0" in str(facts_task[0]["event_data"]["res"])

        env = dict(os.environ, SLURM_CONF="/etc/slurm/slurm.conf")
        job = subprocess.run(
            ["srun", "--nodes=1", "--time=1", "hostname"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert job.returncode == 0, job.stderr
        assert job.stdout.strip() == os.uname().nodename.split(".")[0]

        second = _run_site(project, tmp_path / "run2", collections)
        assert second.status == "successful", _output(second)[-4000:]
        assert second.stats["changed"] == {}, f"second run changed: {second.stats['changed']}"
        assert second.stats["failures"] == {}

        accepted = _run_site(project, tmp_path / "run3", collections, "validate.yml")
        report = _output(accepted)
        assert accepted.status == "successful", report[-4000:]
        assert "archform validate: PASS" in report and "all 1 compute nodes passed" in report

        # A drained node must be reported as failed, by name.
        subprocess.run(
            ["scontrol", "update", "nodename=localhost", "state=drain", "reason=archform-test"],
            env=env,
            check=True,
            timeout=60,
        )
        rejected = _run_site(project, tmp_path / "run4", collections, "validate.yml")
        subprocess.run(
            ["scontrol", "update", "nodename=localhost", "state=resume"],
            env=env,
            check=False,
            timeout=60,
        )
        report = _output(rejected)
        assert rejected.status == "failed", report[-4000:]
        assert "bad nodes: localhost" in report and "localhost: stage 0 slurm_step" in report

        # The GPU tree's prolog/epilog/TaskProlog and enroot.conf under this Slurm.
        seconds = bootstrap_node_scripts.exercise(env)
        print(f"node scripts under Slurm: {seconds:.1f} s")
    finally:
        _stop_daemons()
        shutil.rmtree(tmp_path / "home", ignore_errors=True)
