"""`archform deploy` for real: the on-prem smoke blueprint becomes a running one-node
Slurm cluster on this (root, Debian) machine; a second run changes nothing; a deploy
killed during the ansible phase is finished by `--from ansible`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import support
from archform.deploy.phases import collections_path, leftover_playbooks

pytestmark = [pytest.mark.integration, pytest.mark.slow, *support.DAEMONS]

SMOKE = support.BLUEPRINTS / "onprem-cpu-smoke.yaml"
HELPER = Path("/usr/local/sbin/archform-service")  # installed by the generated playbooks
TIMEOUT = 1500


def _require() -> dict[str, str]:
    support.require_tool("apt-get", "ansible-playbook")
    support.require_module("ansible_runner")
    if os.geteuid() != 0:
        if support.REQUIRE_TOOLS:
            pytest.fail("ARCHFORM_REQUIRE_TOOLS=1 but the bootstrap test must run as root")
        pytest.skip("the bootstrap test installs packages and starts daemons: run as root")
    found = collections_path(support.ROOT)
    if found is None:
        if support.REQUIRE_TOOLS:
            pytest.fail("collections missing: run scripts/vendor-collections.sh")
        pytest.skip("collections missing: run scripts/vendor-collections.sh")
    return {"ARCHFORM_COLLECTIONS_PATH": found}


def _state(out: Path) -> dict[str, str]:
    return dict(json.loads((out / ".archform-deploy" / "state.json").read_text())["phases"])


def _stop(out: Path) -> None:
    for pid in leftover_playbooks(out / "ansible"):
        os.kill(pid, signal.SIGTERM)
    if HELPER.exists():
        for daemon in ("slurmd", "slurmctld", "munge"):
            subprocess.run(
                [str(HELPER), "stop", daemon], check=False, timeout=90, capture_output=True
            )


def _kill_during_ansible(out: Path, env: dict[str, str]) -> list[str]:
    """Start a deploy, SIGKILL it after a few tasks of site.yml; its output lines."""
    full_env = dict(os.environ, PYTHONPATH=str(support.ROOT / "src"), NO_COLOR="1", **env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "archform", "deploy", str(SMOKE), "-o", str(out)],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    watchdog = threading.Timer(TIMEOUT, proc.kill)
    watchdog.start()
    lines: list[str] = []
    tasks = 0
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            in_ansible = any(x.startswith("[2/3] ansible") for x in lines)
            if in_ansible and line.startswith("  TASK "):
                tasks += 1
            if tasks >= 4:
                os.kill(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=60)
    finally:
        watchdog.cancel()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, "\n".join(lines[-30:])
    return lines


def test_deploy_bootstraps_is_idempotent_and_resumes_after_a_kill(tmp_path: Path) -> None:
    env = _require()
    out = tmp_path / "cluster"
    try:
        first = support.run_cli(["deploy", str(SMOKE), "-o", str(out)], env=env, timeout=TIMEOUT)
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr
        for expected in (
            "[1/3] generate",
            "[2/3] ansible",
            "[3/3] acceptance",
            "  TASK Install the Slurm configuration",
            "    localhost: ok=",
            "deploy finished",
        ):
            assert expected in first.stdout, expected
        assert _state(out) == {"generate": "done", "ansible": "done", "acceptance": "done"}
        log = (out / ".archform-deploy" / "deploy.log").read_text()
        assert "host localhost: ok=" in log and "TASK Run a Slurm step pinned to this node" in log
        assert "Slurm nodes of smoke: slurmd on every compute host" in log
        assert "all 1 Slurm nodes up" in log
        job = subprocess.run(
            ["srun", "--nodes=1", "--time=1", "hostname"],
            env=dict(os.environ, SLURM_CONF="/etc/slurm/slurm.conf"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert job.returncode == 0, job.stderr

        second = support.run_cli(["deploy", str(SMOKE), "-o", str(out)], env=env, timeout=TIMEOUT)
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr
        assert "ansible/site.yml: changed=0" in second.stdout, second.stdout[-3000:]
        assert " 0 written," in second.stdout

        killed = _kill_during_ansible(out, env)
        assert not any("[3/3]" in line for line in killed)
        assert _state(out)["ansible"] == "running"
        assert _state(out)["generate"] == "done"

        resumed = support.run_cli(
            ["deploy", str(SMOKE), "-o", str(out), "--from", "ansible"], env=env, timeout=TIMEOUT
        )
        assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr
        assert "[1/3] generate" not in resumed.stdout
        assert "generate (done) -> ansible -> acceptance" in resumed.stdout
        assert "ansible/site.yml: changed=0" in resumed.stdout
        assert _state(out) == {"generate": "done", "ansible": "done", "acceptance": "done"}
        assert leftover_playbooks(out / "ansible") == []
    finally:
        _stop(out)
