"""Node-side scripts of the generated trees, run for real on this (GPU-less) machine.

- The DCGM prolog runs against a stand-in for `dcgmi` (no DCGM on Debian CI). The stand-in's
  behaviour follows NVIDIA/DCGM dcgmi/Health.cpp (CheckWatches): with no watches set it prints
  "Error: Health watches not enabled. Please enable watches." and returns DCGM_ST_GENERIC_ERROR
  (non-zero exit); otherwise it exits 0 and prints the report, whose JSON form (DcgmiOutputJson:
  header list, body.<tag>.value) carries body."Overall Health".value = Healthy|Warning|Failure
  (HelperHealthToString) - exit 0 also for Failure.
- enroot.conf is evaluated with the semantics of enroot's loader (NVIDIA/enroot enroot.in,
  config::load: `eval echo "${value}"` with the caller's environment, after HOME/UID/XDG_* are
  known): every value must expand with only those variables set.
- The Slurm TaskProlog prints `export NAME=value` lines (slurm.schedmd.com/prolog_epilog.html).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.targets.ansible import nccl
from archform.render.targets.common.training_view import training_view
from archform.spec import load_paths
from archform.spec.models.training import TrainingCluster

DCGMI_STANDIN = r"""#!/bin/sh
# Stand-in for NVIDIA dcgmi (health subcommand only), after dcgmi/Health.cpp.
state=${STANDIN_STATE:?}
case "$*" in
  *--set*)
    [ -e "$state/hostengine-down" ] && { echo "Error: unable to establish a connection"; exit 255; }
    touch "$state/watches"; echo "Health monitor systems set successfully."; exit 0 ;;
  *--check*)
    [ -e "$state/hostengine-down" ] && { echo "Error: unable to establish a connection"; exit 255; }
    if [ ! -e "$state/watches" ]; then
      echo "Error: Health watches not enabled. Please enable watches. "; exit 253
    fi
    v=$(cat "$state/verdict")
    printf '{\n "body" : {\n  "Overall Health" : { "value" : "%s" }\n },\n' "$v"
    printf ' "header" : [ "Health Monitor Report" ]\n}\n'
    exit 0 ;;
esac
exit 1
"""


def _tree(stem: str) -> dict[str, bytes]:
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    return {f.path: f.content for f in build_files(loaded)}


def _cluster(stem: str) -> TrainingCluster:
    [doc] = load_paths([support.BLUEPRINTS / f"{stem}.yaml"]).documents
    assert isinstance(doc.model, TrainingCluster)
    return doc.model


@pytest.fixture
def prolog(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    files = _tree("aws-p5-efa-fsx")
    script = tmp_path / "prolog.sh"
    script.write_bytes(files["ansible/roles/health/files/prolog.sh"])
    script.chmod(0o755)
    dcgmi = tmp_path / "dcgmi"
    dcgmi.write_text(DCGMI_STANDIN)
    dcgmi.chmod(0o755)
    state = tmp_path / "state"
    state.mkdir()
    gpu = tmp_path / "nvidia0"
    gpu.touch()
    env = dict(os.environ)
    env.update(
        STANDIN_STATE=str(state),
        ARCHFORM_DCGMI=str(dcgmi),
        ARCHFORM_GPU_DEVICE=str(gpu),
        ARCHFORM_PROLOG_LOG=str(tmp_path / "dcgm.json"),
        ARCHFORM_HOOK_DIR=str(tmp_path / "prolog.d"),
    )
    (tmp_path / "prolog.d").mkdir()
    return script, state, env


def _run(script: Path, env: dict[str, str]) -> int:
    return subprocess.run([str(script)], env=env, capture_output=True, check=False).returncode


@pytest.mark.parametrize(("verdict", "code"), [("Healthy", 0), ("Warning", 0), ("Failure", 1)])
def test_prolog_judges_the_health_json(
    prolog: tuple[Path, Path, dict[str, str]], verdict: str, code: int
) -> None:
    script, state, env = prolog
    (state / "watches").touch()
    (state / "verdict").write_text(verdict)
    assert _run(script, env) == code


def test_prolog_sets_lost_watches_once_instead_of_draining(
    prolog: tuple[Path, Path, dict[str, str]],
) -> None:
    """After a reboot the watches are gone: the prolog sets them and then reads a verdict."""
    script, state, env = prolog
    (state / "verdict").write_text("Healthy")
    assert _run(script, env) == 0
    assert (state / "watches").exists()


def test_prolog_drains_when_dcgm_cannot_answer(prolog: tuple[Path, Path, dict[str, str]]) -> None:
    script, state, env = prolog
    (state / "hostengine-down").touch()
    (state / "verdict").write_text("Healthy")
    assert _run(script, env) == 1


def test_a_failing_prolog_hook_drains(prolog: tuple[Path, Path, dict[str, str]]) -> None:
    """Fabric hooks (the TCPXO RxDM hook) run first; a failing one drains the node."""
    script, state, env = prolog
    (state / "watches").touch()
    (state / "verdict").write_text("Healthy")
    hook = Path(env["ARCHFORM_HOOK_DIR"]) / "50-rxdm"
    hook.write_text("#!/bin/sh\nexit 3\n")
    hook.chmod(0o755)
    assert _run(script, env) == 1
    hook.write_text("#!/bin/sh\nexit 0\n")
    assert _run(script, env) == 0


def _enroot_values(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, value = line.strip().partition(" ")
        out[key] = value.strip()
    return out


def _loader_eval(value: str, home: Path) -> subprocess.CompletedProcess[str]:
    """enroot's `eval echo "${value}"`, with only what the loader has set; unset is an error."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": "/run"}
    return subprocess.run(
        ["bash", "-c", f'set -u; eval echo "{value}"'],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("stem", ["aws-p5-efa-fsx", "gcp-a3-mega-tcpxo", "azure-nd-h100-v5"])
def test_enroot_paths_resolve_with_the_loaders_variables(stem: str, tmp_path: Path) -> None:
    files = _tree(stem)
    values = _enroot_values(files["ansible/roles/pyxis_enroot/files/enroot.conf"].decode())
    uid = str(os.getuid())
    for key in ("ENROOT_RUNTIME_PATH", "ENROOT_CACHE_PATH", "ENROOT_DATA_PATH"):
        result = _loader_eval(values[key], tmp_path)
        assert result.returncode == 0, (key, values[key], result.stderr)
        path = result.stdout.strip()
        assert path.startswith("/") and f"/{uid}/" in path + "/", path
        assert not path.startswith(str(tmp_path)), "enroot state must not land under $HOME"


def test_the_old_enroot_variable_is_not_defined_by_the_loader(tmp_path: Path) -> None:
    """Negative control: ${ENROOT_LOCAL_PATH} is none of the loader's variables."""
    assert _loader_eval("${ENROOT_LOCAL_PATH}/${UID}/enroot/data", tmp_path).returncode != 0


def test_enroot_state_is_on_the_images_local_nvme() -> None:
    aws = _tree("aws-p5-efa-fsx")["ansible/roles/pyxis_enroot/files/enroot.conf"].decode()
    assert "ENROOT_DATA_PATH /opt/dlami/nvme/enroot/" in aws  # DLAMI nvme_location


@pytest.mark.parametrize("stem", ["onprem-h100-ib-lustre", "gcp-a3-mega-tcpxo", "aws-p5-efa-fsx"])
def test_task_prolog_exports_the_nccl_settings(stem: str, tmp_path: Path) -> None:
    support.require_tool("sh")
    script = tmp_path / "task_prolog.sh"
    script.write_bytes(_tree(stem)["ansible/roles/nccl/files/task_prolog.sh"])
    env = {"PATH": "/usr/bin:/bin"}
    out = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, check=True)
    exported = dict(
        line.removeprefix("export ").split("=", 1) for line in out.stdout.splitlines() if line
    )
    view = training_view(_cluster(stem))
    expected = {k: str(v) for k, v in [*nccl.nccl_conf(view), *nccl.profile_exports(view)]}
    assert expected and {k: exported.get(k) for k in expected} == expected
    # A value the user set for the job wins.
    key = next(iter(expected))
    env[key] = "user-choice"
    out = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, check=True)
    assert f"export {key}=" not in out.stdout


def test_nccl_settings_reach_containers_and_keep_the_azure_image_file() -> None:
    files = _tree("azure-nd-h100-v5")
    env_file = files["ansible/roles/pyxis_enroot/files/nccl.env"].decode()
    assert "NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml" in env_file
    mounts = files["ansible/roles/pyxis_enroot/files/nccl.fstab"].decode()
    assert "/opt/microsoft /opt/microsoft none x-create=dir,bind,ro" in mounts
    tasks = files["ansible/roles/nccl/tasks/main.yml"].decode()
    assert "ansible.builtin.blockinfile:" in tasks and "image_nccl_conf_kept" in tasks
    assert "image_nccl_conf_kept: true" in files["ansible/group_vars/all.yml"].decode()
    conf = files["ansible/roles/slurm/files/slurm.conf"].decode()
    assert "TaskProlog=/etc/slurm/task_prolog.sh" in conf


def test_nhc_checks_gpu_count_and_every_listed_port() -> None:
    text = _tree("onprem-h100-ib-lustre")["ansible/roles/health/files/nhc.conf"].decode()
    cluster = _cluster("onprem-h100-ib-lustre")
    assert cluster.fabric.hcas
    for hca in cluster.fabric.hcas:
        assert f"check_hw_ib 400 {hca}:1\n" in text
    assert "check_cmd_output -t 30 -m '/^8$/' -e 'nvidia-smi --query-gpu=count" in text
