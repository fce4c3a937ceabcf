"""The generated node-side scripts, run by the real Slurm of the single-node bootstrap.

tests/integration/test_bootstrap.py calls `exercise(...)` once the generated playbooks have
made this machine a one-node Slurm cluster. The smoke cluster has no GPUs, so its own tree
wires no Prolog; the scripts come from the bundled GPU blueprint's generated tree
(onprem-h100-ib-lustre), are installed at the paths its role tasks name, and its slurm.conf
Prolog/Epilog/TaskProlog lines are added to the running cluster's slurm.conf. Then Slurm
(slurmd 22.05) runs them around real jobs.

Stand-ins, only for vendor tools Debian 12 does not ship (no dcgm, enroot or nhc package):

- `dcgmi` (/usr/local/bin, on the default PATH of the prolog's shell: slurmd builds the
  prolog's environment from scratch without PATH, SchedMD/slurm
  src/plugins/prep/script/prep_script_slurmd.c _build_env, and dash then searches
  /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin). Behaviour from NVIDIA/DCGM
  dcgmi/Health.cpp: `health --set`/`-s` sets watches; `health --check`/`-c` without watches
  prints "Error: Health watches not enabled. Please enable watches." and exits non-zero;
  with watches it exits 0 for every verdict and prints the report, whose JSON form
  (`--json`/`-j`, DcgmiOutputJson) carries body."Overall Health".value = Healthy, Warning or
  Failure. `diag --run 1`/`-r 1` exits 0 when every test passed (dcgmi/Diag.cpp).
- enroot's start-up and its first use of the temporary path (tests/enroot_standin.py LOADER,
  after NVIDIA/enroot v3.5.0 enroot.in and src/common.sh common::mktmpdir): run in a job
  step, it evaluates the generated enroot.conf, creates only the folders enroot creates
  (cache, data, runtime) and then needs `mktemp -d -p "${ENROOT_TEMP_PATH}"` to succeed.
- the instance-store NVMe disk: a sparse file on a loop device (this machine has no instance
  storage, and its kernel has no md driver, so only the single-disk path of the script runs).
  The generated archform-local-nvme.service's ExecStart is run as systemd runs it at boot (no
  systemd here); then a reboot (unmount, run it again) and a stop/start (the disk blanked,
  run it again) are simulated, and the enroot paths are checked after each.

The drain reason is Slurm's own: slurmctld drains a node whose prolog failed with reason
"Prolog error" (SchedMD/slurm src/slurmctld/node_mgr.c). NHC is not run: Debian has no NHC
package and its source (github.com/mej/nhc) is not reachable from CI; the generated nhc.conf
is checked by tests/render/ansible/test_node_scripts.py.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import enroot_standin as standin
import support
from archform.render.generate import build_files
from archform.spec import load_paths

GPU_BLUEPRINT = support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml"
HELPER = Path("/usr/local/sbin/archform-service")
SLURM_CONF = Path("/etc/slurm/slurm.conf")
DCGMI = Path("/usr/local/bin/dcgmi")
STATE = Path("/run/archform-dcgmi-standin")
GPU_DEVICE = Path("/dev/nvidia0")
WIRED = ("Prolog", "Epilog", "TaskProlog")

DCGMI_STANDIN = f"""#!/bin/sh
# Stand-in for NVIDIA dcgmi (health and diag), after NVIDIA/DCGM dcgmi/Health.cpp and Diag.cpp.
state={STATE}
echo "$*" >>"$state/calls"
command=$1
mode=
for arg in "$@"; do
  case "$arg" in
    --set|-s) mode=set ;;
    --check|-c) mode=check ;;
  esac
done
case "$command:$mode" in
  health:set)
    touch "$state/watches"; echo "Health monitor systems set successfully."; exit 0 ;;
  health:check)
    if [ ! -e "$state/watches" ]; then
      echo "Error: Health watches not enabled. Please enable watches. "; exit 253
    fi
    verdict=$(cat "$state/verdict")
    printf '{{\\n "body" : {{\\n  "Overall Health" : {{ "value" : "%s" }}\\n }},\\n' "$verdict"
    printf ' "header" : [ "Health Monitor Report" ]\\n}}\\n'
    exit 0 ;;
  diag:*)
    echo "Successfully ran diagnostic for group."; exit 0 ;;
esac
echo "stand-in: unsupported arguments: $*" >&2
exit 1
"""


def _run(args: list[str], env: dict[str, str], timeout: int = 120) -> str:
    result = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{args}: {result.stdout}{result.stderr}"
    return result.stdout


def _node(env: dict[str, str]) -> dict[str, str]:
    """State and Reason of `scontrol show node localhost`."""
    text = _run(["scontrol", "show", "node", "localhost"], env)
    state = re.search(r"\bState=(\S+)", text)
    reason = re.search(r"^\s*Reason=(.*)$", text, re.MULTILINE)
    return {"State": state.group(1) if state else "", "Reason": reason.group(1) if reason else ""}


def _wait(predicate: Callable[[], bool], what: str, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}")


def _restart(env: dict[str, str]) -> None:
    for daemon in ("slurmctld", "slurmd"):
        _run([str(HELPER), "restart", daemon], env)
    _wait(
        lambda: (
            subprocess.run(
                ["sinfo", "-h", "-n", "localhost", "-o", "%T"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=30,
            ).stdout.strip()
            == "idle"
        ),
        "localhost idle after the restart",
    )


def _emits(task_prolog: str) -> dict[str, str]:
    """NAME -> value of every `emit NAME VALUE` line of the generated TaskProlog."""
    out = {}
    for line in task_prolog.splitlines():
        if line.startswith("emit "):
            _, name, value = shlex.split(line)
            out[name] = value
    return out


def exercise(env: dict[str, str]) -> float:
    """Run the GPU tree's node scripts under this machine's Slurm; the seconds it took."""
    start = time.monotonic()
    files = {
        f.path: f.content.decode()
        for f in build_files(load_paths([GPU_BLUEPRINT]))
        if f.path.startswith("ansible/")
    }
    conf = files["ansible/roles/slurm/files/slurm.conf"]
    wiring = [line for line in conf.splitlines() if line.split("=")[0] in WIRED]
    paths = dict(line.split("=", 1) for line in wiring)
    assert set(paths) == set(WIRED), f"the GPU tree's slurm.conf wires {paths}"
    # The role tasks install the scripts where slurm.conf points.
    health = files["ansible/roles/health/tasks/main.yml"]
    assert 'dest: "/etc/slurm/{{ item }}"' in health and "loop: [prolog.sh, epilog.sh]" in health
    assert "dest: /etc/slurm/task_prolog.sh" in files["ansible/roles/nccl/tasks/main.yml"]
    install = {
        Path(paths["Prolog"]): files["ansible/roles/health/files/prolog.sh"],
        Path(paths["Epilog"]): files["ansible/roles/health/files/epilog.sh"],
        Path(paths["TaskProlog"]): files["ansible/roles/nccl/files/task_prolog.sh"],
    }
    assert {p.as_posix() for p in install} == {
        "/etc/slurm/prolog.sh",
        "/etc/slurm/epilog.sh",
        "/etc/slurm/task_prolog.sh",
    }
    for path in (*install, DCGMI):
        assert not path.exists(), f"{path} exists already; this test would overwrite it"
    original = SLURM_CONF.read_text()
    made_device = not GPU_DEVICE.exists()
    enroot_mount = Path(standin.enroot_local_path(files["ansible/group_vars/all.yml"]))
    made_mount = not enroot_mount.exists()
    try:
        for path, text in install.items():
            path.write_text(text)
            path.chmod(0o755)
        DCGMI.write_text(DCGMI_STANDIN)
        DCGMI.chmod(0o755)
        STATE.mkdir(exist_ok=True)
        if made_device:
            GPU_DEVICE.touch()  # the prolog checks only that the device node exists
        SLURM_CONF.write_text(original + "\n".join(wiring) + "\n")
        _restart(env)
        _healthy_job_runs_with_nccl_settings(env, files)
        _failing_health_drains_the_node(env)
        _enroot_on_local_nvme_across_reboots(env, files, enroot_mount)
    finally:
        # Leave Slurm as the bootstrap made it, for the system tests after this one: no job
        # left whose epilog could still run (a removed epilog drains the node with "Epilog
        # error", and slurmctld keeps that state across restarts), the original slurm.conf
        # live in the daemons before the scripts go, and the node resumed.
        _settle(env)
        SLURM_CONF.write_text(original)
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run(
                [str(HELPER), "restart", daemon],
                env=env,
                capture_output=True,
                check=False,
                timeout=120,
            )
        for path in (*install, DCGMI):
            path.unlink(missing_ok=True)
        shutil.rmtree(STATE, ignore_errors=True)
        if made_device:
            GPU_DEVICE.unlink(missing_ok=True)
        shutil.rmtree(enroot_mount / "enroot", ignore_errors=True)
        if made_mount:
            shutil.rmtree(enroot_mount, ignore_errors=True)
        subprocess.run(
            ["scontrol", "update", "nodename=localhost", "state=resume"],
            env=env,
            capture_output=True,
            check=False,
            timeout=60,
        )
    _wait(lambda: _resumed(env), "the node to resume after the original slurm.conf is back")
    return time.monotonic() - start


def _resumed(env: dict[str, str]) -> bool:
    """Resume the node (once slurmctld answers again) and tell whether it is out of DRAIN."""
    subprocess.run(
        ["scontrol", "update", "nodename=localhost", "state=resume"],
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
    )
    try:
        return "DRAIN" not in _node(env)["State"]
    except AssertionError:  # slurmctld still starting
        return False


def _settle(env: dict[str, str]) -> None:
    """Cancel every job and wait until none is left (epilogs have run)."""
    cancel = ["scancel", "--user=root"]
    subprocess.run(cancel, env=env, capture_output=True, check=False, timeout=60)

    def no_jobs() -> bool:
        out = subprocess.run(
            ["squeue", "-h", "-o", "%i"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        return out.returncode == 0 and not out.stdout.strip()

    _wait(no_jobs, "every job (and its epilog) to end", limit=120)


def _healthy_job_runs_with_nccl_settings(env: dict[str, str], files: dict[str, str]) -> None:
    """After a reboot (no watches) the prolog sets them, reads Healthy, and the job runs."""
    (STATE / "verdict").write_text("Healthy")
    (STATE / "watches").unlink(missing_ok=True)
    out = _run(["srun", "--nodes=1", "--time=1", "env"], env)
    job_env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    expected = _emits(files["ansible/roles/nccl/files/task_prolog.sh"])
    assert expected, "the generated TaskProlog exports nothing"
    assert {k: job_env.get(k) for k in expected} == expected
    calls = (STATE / "calls").read_text().splitlines()
    assert any(c.startswith("health --check") for c in calls), calls
    assert any(c.startswith("health --set") for c in calls), calls
    # The epilog runs the quick diagnostic once the job has ended.
    _wait(
        lambda: any(c.startswith("diag ") for c in (STATE / "calls").read_text().splitlines()),
        "the epilog's dcgmi diag",
    )
    assert "DRAIN" not in _node(env)["State"]


def _failing_health_drains_the_node(env: dict[str, str]) -> None:
    """dcgmi exits 0 with a Failure verdict: the prolog must read the JSON and drain."""
    (STATE / "verdict").write_text("Failure")
    sbatch = ["sbatch", "--parsable", "--time=1", "--output=/dev/null", "--wrap", "true"]
    job = _run(sbatch, env).strip()
    try:
        _wait(lambda: "DRAIN" in _node(env)["State"], "the node to drain", limit=90)
        node = _node(env)
        assert node.get("Reason", "").startswith("Prolog error"), node
    finally:
        subprocess.run(["scancel", job], env=env, capture_output=True, check=False, timeout=60)
        (STATE / "verdict").write_text("Healthy")
    _run(["scontrol", "update", "nodename=localhost", "state=resume"], env)
    _wait(lambda: "DRAIN" not in _node(env)["State"], "the node to resume")


def _enroot_on_local_nvme_across_reboots(
    env: dict[str, str], files: dict[str, str], mount: Path
) -> None:
    """Boot, reboot, stop/start: after each, every enroot path exists or enroot creates it."""
    role = "ansible/roles/local_nvme/files/"
    script = Path("/tmp/archform-local-nvme-under-test")
    loader = Path("/tmp/archform-enroot-loader-standin")
    conf = Path("/tmp/archform-enroot-under-test.conf")
    argv = standin.boot_argv(files[role + "archform-local-nvme.service"])
    assert argv[1:] == [str(mount), "enroot"], argv
    marker = mount / "kept-across-reboot"
    with standin.loop_disk(Path("/tmp/archform-instance-store-standin.img")) as disk:
        try:
            script.write_text(files[role + "archform-local-nvme"])
            loader.write_text(standin.LOADER)
            conf.write_text(files["ansible/roles/pyxis_enroot/files/enroot.conf"])
            _boot(script, argv, disk.device, mount)
            paths = _enroot_paths_in_a_job(env, loader, conf, mount)
            marker.write_text("written on the first boot\n")

            standin.unmount(mount)  # reboot: the instance store keeps its file system
            _boot(script, argv, disk.device, mount)
            assert marker.is_file(), "the reboot re-created local NVMe instead of mounting it"
            assert _enroot_paths_in_a_job(env, loader, conf, mount) == paths

            standin.unmount(mount)  # stop/start: the disk comes back blank
            disk.blank()
            _boot(script, argv, disk.device, mount)
            assert not marker.exists()
            assert _enroot_paths_in_a_job(env, loader, conf, mount) == paths
        finally:
            standin.unmount(mount)
            for path in (script, loader, conf):
                path.unlink(missing_ok=True)


def _boot(script: Path, argv: list[str], device: str, mount: Path) -> None:
    """The unit's ExecStart as systemd runs it; local NVMe must end up mounted there."""
    run = standin.run_boot(script, argv, device)
    assert run.returncode == 0, run.stdout + run.stderr
    assert standin.is_mounted(mount), f"{mount} is not mounted after boot: {run.stdout}"
    assert standin.mode(mount / "enroot") == 0o1777


def _enroot_paths_in_a_job(
    env: dict[str, str], loader: Path, conf: Path, mount: Path
) -> dict[str, str]:
    """enroot's start-up and mktemp in a job step; the resolved paths, all on local NVMe."""
    out = _run(["srun", "--nodes=1", "--time=1", "bash", str(loader), str(conf)], env)
    resolved = standin.resolved(out)
    home = os.environ.get("HOME", "/root")
    uid = str(os.getuid())
    for key in standin.PATH_KEYS:
        path = resolved[key]
        assert path.startswith(f"{mount}/enroot/{uid}"), (key, path)
        assert not path.startswith(home + "/"), (key, path)
        assert Path(path).is_dir(), f"nothing created {path}"
    return resolved
