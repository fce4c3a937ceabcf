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
- enroot's configuration loader (NVIDIA/enroot enroot.in, config::init, config::export,
  config::fini): bash with `set -euo pipefail`; each `KEY VALUE` line of enroot.conf whose
  key matches ^ENROOT_[[:upper:]_]+$ is evaluated as `eval echo "${value}"` (an unset
  variable is fatal) and exported unless the environment already sets it; "n"/"no"/"false"
  values are unset; then the cache, data and runtime folders are created with umask 077.
  The generated archform-local-nvme prepares the mount point first (no NVMe here: it
  makes the folder on the root disk, as it does on a machine without instance storage).

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

ENROOT_LOADER = r"""#!/bin/bash
# enroot's configuration loader semantics (NVIDIA/enroot enroot.in, config::*), then the paths.
set -euo pipefail
while IFS=$' \t=' read -r key value; do
    if [[ "${key}" =~ ^ENROOT_[[:upper:]_]+$ ]]; then
        evaluated=$(eval echo "${value}")
        export "${key}=${!key:-${evaluated}}"
    fi
done < "$1"
for var in $(compgen -e "ENROOT_"); do
    if [[ "${!var}" =~ ^(no?|N[oO]?|[fF](alse)?|FALSE)$ ]]; then unset "${var}"; fi
done
(umask 077 && mkdir -p "${ENROOT_CACHE_PATH}" "${ENROOT_DATA_PATH}" "${ENROOT_RUNTIME_PATH}")
for var in ENROOT_RUNTIME_PATH ENROOT_CACHE_PATH ENROOT_DATA_PATH ENROOT_TEMP_PATH; do
    echo "${var}=${!var}"
done
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
    found = re.search(
        r'^enroot_local_path: "?([^"\n]+)"?$', files["ansible/group_vars/all.yml"], re.M
    )
    assert found, "group_vars has no enroot_local_path"
    enroot_mount = Path(found.group(1))
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
        _enroot_paths_resolve_on_local_nvme(env, files, enroot_mount)
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


def _enroot_paths_resolve_on_local_nvme(
    env: dict[str, str], files: dict[str, str], mount: Path
) -> None:
    """enroot.conf through enroot's loader semantics, in a job step: state on local NVMe."""
    script = Path("/tmp/archform-local-nvme-under-test")
    loader = Path("/tmp/archform-enroot-loader-standin")
    conf = Path("/tmp/archform-enroot-under-test.conf")
    try:
        script.write_text(files["ansible/roles/pyxis_enroot/files/archform-local-nvme"])
        script.chmod(0o755)
        _run([str(script), str(mount)], env)
        assert mount.is_dir()
        loader.write_text(ENROOT_LOADER)
        loader.chmod(0o755)
        conf.write_text(files["ansible/roles/pyxis_enroot/files/enroot.conf"])
        out = _run(["srun", "--nodes=1", "--time=1", str(loader), str(conf)], env)
        resolved = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        home = os.environ.get("HOME", "/root")
        uid = str(os.getuid())
        for key in ("ENROOT_RUNTIME_PATH", "ENROOT_CACHE_PATH", "ENROOT_DATA_PATH"):
            path = resolved[key]
            assert path.startswith(f"{mount}/enroot/{uid}/"), (key, path)
            assert not path.startswith(home + "/"), (key, path)
            assert Path(path).is_dir(), f"the loader did not create {path}"
        assert resolved["ENROOT_TEMP_PATH"].startswith(f"{mount}/"), resolved
    finally:
        for path in (script, loader, conf):
            path.unlink(missing_ok=True)
