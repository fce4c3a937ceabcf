"""Containers on the generated GPU nodes: enroot's paths, the fabric's devices and libraries, and
the NVIDIA Container Toolkit, checked on archform's own trees for the bundled blueprints.

What stands in for what (nothing here has enroot, systemd, GPUs or fabric hardware):

- enroot's start-up and its first use of the temporary path: tests/enroot_standin.py LOADER,
  which follows NVIDIA/enroot v3.5.0 enroot.in and src/common.sh;
- the boot unit: its generated ExecStart is run as systemd runs it, with no instance-store
  disk (ARCHFORM_LOCAL_NVME_DISKS=none) and the mount point moved under a temporary folder;
- the container's /dev under ENROOT_RESTRICT_DEV: modelled from enroot's own files (v3.5.0):
  conf/hooks/10-devices.sh mounts a tmpfs with the basic devices, 98-nvidia.sh adds the GPUs,
  99-mellanox.sh adds /dev/infiniband (uverbs, rdma_cm) when MELLANOX_VISIBLE_DEVICES is set
  in the container's environment (which environ.d feeds), and mounts.d lines are mounted after
  the hooks (src/runtime.sh runtime::_do_mounts_fini);
- the generated enroot hooks run for real with bash, against an empty folder as the image and a
  stand-in node tree (ARCHFORM_HOST_ROOT).

Only the target proves that the devices open, that NCCL loads the plugin in a real container
and that nvidia-container-cli configures real GPUs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import enroot_standin as standin
import support
from archform.render.generate import build_files
from archform.spec import load_paths

GPU_TREES = [
    "aws-p5-efa-fsx",
    "gcp-a3-mega-tcpxo",
    "azure-nd-h100-v5",
    "onprem-h100-ib-lustre",
    "platform-two-tier",
]
ROLE = "ansible/roles/pyxis_enroot"


def _tree(stem: str) -> dict[str, str]:
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    out = {}
    for f in build_files(loaded):
        try:
            out[f.path] = f.content.decode()
        except UnicodeDecodeError:  # pragma: no cover - no binary files in these trees
            continue
    return out


def _prefix(files: dict[str, str]) -> str:
    """'ansible/' or, in a platform tree, '<cluster>/ansible/' of the training cluster."""
    [role] = {p.split("roles/pyxis_enroot/")[0] for p in files if "/roles/pyxis_enroot/" in p}
    return role


def _role_copies(files: dict[str, str], prefix: str) -> dict[str, str]:
    """dest -> text of every file the pyxis_enroot role copies (any tasks file, any block)."""
    out: dict[str, str] = {}
    yaml = YAML(typ="safe", pure=True)

    def walk(tasks: Any) -> None:
        for task in tasks or []:
            for key in ("block", "rescue", "always"):
                walk(task.get(key))
            args = task.get("ansible.builtin.copy")
            if isinstance(args, dict) and "src" in args:
                out[str(args["dest"])] = files[f"{prefix}roles/pyxis_enroot/files/{args['src']}"]

    for path, text in sorted(files.items()):
        if path.startswith(f"{prefix}roles/pyxis_enroot/tasks/"):
            walk(yaml.load(text))
    return out


def _settings(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or " " in key:
            key, _, value = line.partition(" ")
        out[key] = value.strip()
    return out


def _installed(copies: dict[str, str], folder: str) -> list[str]:
    """Texts the role installs into /etc/enroot/<folder>/, in enroot's (name) order."""
    base = f"/etc/enroot/{folder}/"
    return [text for dest, text in sorted(copies.items()) if dest.startswith(base)]


# --- enroot's own paths -------------------------------------------------------------------


@pytest.mark.parametrize("stem", GPU_TREES)
def test_enroot_creates_every_path_it_uses_after_the_boot_unit(stem: str, tmp_path: Path) -> None:
    """Boot unit, then enroot's start-up and an import's mktemp: every path exists."""
    files = _tree(stem)
    prefix = _prefix(files)
    mount = standin.enroot_local_path(files[f"{prefix}group_vars/all.yml"])
    stand = tmp_path / "nvme"
    script = tmp_path / "archform-local-nvme"
    script.write_text(files[f"{prefix}roles/local_nvme/files/archform-local-nvme"])
    argv = standin.boot_argv(files[f"{prefix}roles/local_nvme/files/archform-local-nvme.service"])
    boot = standin.run_boot(script, argv, "none", {mount: str(stand)})
    assert boot.returncode == 0, boot.stdout + boot.stderr
    conf = tmp_path / "enroot.conf"
    text = files[f"{prefix}roles/pyxis_enroot/files/enroot.conf"]
    assert f" {mount}/" in text, "enroot's state is not on the image's local NVMe"
    conf.write_text(text.replace(f" {mount}/", f" {stand}/"))
    loader = tmp_path / "loader"
    loader.write_text(standin.LOADER)
    home = tmp_path / "home"
    home.mkdir()
    run = standin.run_loader(loader, conf, home)
    assert run.returncode == 0, f"enroot would fail: {run.stderr.strip()}"
    paths = standin.resolved(run.stdout)
    uid = str(os.getuid())
    for key in standin.PATH_KEYS:
        assert Path(paths[key]).is_dir(), (key, paths[key])
        assert paths[key].startswith(f"{stand}/"), (key, paths[key])
        assert f"/{uid}" in paths[key], "enroot state must be per user"
    # The shared parent the unit makes lets every user's mkdir -p create its own folder.
    shared = Path(paths["ENROOT_TEMP_PATH"]).parent
    assert standin.mode(shared) == 0o1777, oct(standin.mode(shared))


@pytest.mark.parametrize("stem", GPU_TREES)
def test_enroot_temp_path_is_the_per_user_parent_enroot_makes(stem: str) -> None:
    """Cluster Toolkit's layout: ENROOT_TEMP_PATH is the parent of runtime, cache and data."""
    files = _tree(stem)
    values = _settings(files[f"{_prefix(files)}roles/pyxis_enroot/files/enroot.conf"])
    temp = values["ENROOT_TEMP_PATH"]
    for key in ("ENROOT_RUNTIME_PATH", "ENROOT_CACHE_PATH", "ENROOT_DATA_PATH"):
        assert str(Path(values[key]).parent) == temp, (key, values[key], temp)


# --- the fabric's devices -----------------------------------------------------------------

# enroot v3.5.0 conf/hooks/10-devices.sh: what a restricted /dev holds.
BASIC_DEV = {
    "/dev/zero", "/dev/null", "/dev/full", "/dev/urandom", "/dev/random", "/dev/pts",
    "/dev/tty", "/dev/shm", "/dev/mqueue", "/dev/hugepages", "/dev/log",
}  # fmt: skip
# What the fabric's NCCL transport opens (vendor sources in spec/data/containers.yaml):
# EFA and InfiniBand uverbs devices live in /dev/infiniband; the TCPXO FasTrak plugin reads
# NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY=/dev/aperture_devices.
NEEDED_DEV = {
    "aws-p5-efa-fsx": "/dev/infiniband",
    "platform-two-tier": "/dev/infiniband",
    "azure-nd-h100-v5": "/dev/infiniband",
    "onprem-h100-ib-lustre": "/dev/infiniband",
    "gcp-a3-mega-tcpxo": "/dev/aperture_devices",
}


def container_dev(copies: dict[str, str]) -> set[str]:
    """The container's /dev entries from the role's enroot files (model in the docstring)."""
    conf = _settings(copies["/etc/enroot/enroot.conf"])
    if conf.get("ENROOT_RESTRICT_DEV", "") in ("", "n", "no", "N", "No", "NO", "false"):
        return {"/dev"}  # the host's /dev, rbound by mounts.d/10-system.fstab
    dev = set(BASIC_DEV) | {"/dev/nvidia*"}  # 98-nvidia.sh (nvidia-container-cli)
    environ: dict[str, str] = {}
    for text in _installed(copies, "environ.d"):
        environ.update(_settings(text))
    if environ.get("MELLANOX_VISIBLE_DEVICES", "void") not in ("void", "none"):
        dev.add("/dev/infiniband")  # 99-mellanox.sh: uverbs of every visible HCA, rdma_cm
    for text in _installed(copies, "mounts.d"):
        for line in text.splitlines():
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 2 and fields[1].startswith("/dev/"):
                dev.add(os.path.normpath(fields[1]))
    return dev


@pytest.mark.parametrize("stem", GPU_TREES)
def test_containers_see_the_fabric_devices(stem: str) -> None:
    files = _tree(stem)
    copies = _role_copies(files, _prefix(files))
    dev = container_dev(copies)
    assert "/dev" in dev or NEEDED_DEV[stem] in dev, (
        f"{NEEDED_DEV[stem]} is hidden from containers: {sorted(dev)}"
    )


def test_restricted_dev_stays_on() -> None:
    """The fix binds the devices in; it does not hand containers the host's whole /dev."""
    for stem in GPU_TREES:
        files = _tree(stem)
        conf = _settings(files[f"{_prefix(files)}roles/pyxis_enroot/files/enroot.conf"])
        assert conf["ENROOT_RESTRICT_DEV"] == "y", stem


# --- the node's fabric libraries ------------------------------------------------------------

# What NCCL needs from the node per fabric (sources in spec/data/containers.yaml): the EFA
# installer's libfabric and aws-ofi-nccl; the TCPXO FasTrak plugin folder, first on
# LD_LIBRARY_PATH as Cluster Toolkit's run-nccl-tests.sh sets it inside the container.
HOST_LIBS = {
    "aws-p5-efa-fsx": (
        ["/opt/amazon/efa", "/opt/amazon/ofi-nccl"],
        ["/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu", "/opt/amazon/efa/lib"],
    ),
    "platform-two-tier": (
        ["/opt/amazon/efa", "/opt/amazon/ofi-nccl"],
        ["/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu", "/opt/amazon/efa/lib"],
    ),
    "gcp-a3-mega-tcpxo": (["/var/lib/tcpxo/lib64"], ["/var/lib/tcpxo/lib64"]),
}
IMAGE_PATH = "/usr/local/cuda/lib64"


def _run_hooks(
    copies: dict[str, str], tmp: Path, node: list[str], image: list[str]
) -> tuple[set[str], list[str]]:
    """Run the role's hooks.d scripts; (mount targets incl. static mounts.d, LD_LIBRARY_PATH)."""
    host, rootfs = tmp / "host", tmp / "rootfs"
    rootfs.mkdir(parents=True)
    for folder in node:
        (host / folder.lstrip("/")).mkdir(parents=True, exist_ok=True)
    for folder in image:
        (rootfs / folder.lstrip("/")).mkdir(parents=True, exist_ok=True)
    mounts, environ = tmp / "fstab", tmp / "environment"
    mounts.write_text("")
    environ.write_text(f"LD_LIBRARY_PATH={IMAGE_PATH}\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "ENROOT_ROOTFS": str(rootfs),
        "ENROOT_MOUNTS": str(mounts),
        "ENROOT_ENVIRON": str(environ),
        "ARCHFORM_HOST_ROOT": str(host),
    }
    for index, text in enumerate(_installed(copies, "hooks.d")):
        hook = tmp / f"hook{index}.sh"
        hook.write_text(text)
        done = subprocess.run(["bash", str(hook)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    targets = set()
    for text in [mounts.read_text(), *_installed(copies, "mounts.d")]:
        for line in text.splitlines():
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 2:
                targets.add(os.path.normpath(fields[1]))
    value = _settings(environ.read_text()).get("LD_LIBRARY_PATH", "")
    return targets, value.split(":")


@pytest.mark.parametrize("stem", sorted(HOST_LIBS))
def test_the_nodes_fabric_libraries_reach_containers(stem: str, tmp_path: Path) -> None:
    files = _tree(stem)
    copies = _role_copies(files, _prefix(files))
    bound, path = HOST_LIBS[stem]
    targets, library_path = _run_hooks(copies, tmp_path, bound + path, [])
    for folder in bound:
        assert folder in targets, f"{folder} is not bound into containers: {sorted(targets)}"
    for folder in path:
        assert folder in library_path, f"{folder} is not on LD_LIBRARY_PATH: {library_path}"
    assert library_path[-1] == IMAGE_PATH, "the image's own LD_LIBRARY_PATH must stay"


def test_an_image_with_its_own_efa_stack_keeps_it(tmp_path: Path) -> None:
    """AWS DLC and NeMo images bring the EFA installer's stack: nothing is bound over it."""
    files = _tree("aws-p5-efa-fsx")
    copies = _role_copies(files, _prefix(files))
    bound, path = HOST_LIBS["aws-p5-efa-fsx"]
    targets, library_path = _run_hooks(copies, tmp_path, bound + path, ["/opt/amazon/efa"])
    assert not {t for t in targets if t.startswith("/opt/amazon")}, targets
    assert library_path == [IMAGE_PATH]


def test_fabrics_without_host_libraries_bind_none(tmp_path: Path) -> None:
    """InfiniBand images bring their own rdma-core and NCCL: the hook adds nothing."""
    files = _tree("azure-nd-h100-v5")
    copies = _role_copies(files, _prefix(files))
    targets, library_path = _run_hooks(copies, tmp_path, ["/opt/amazon/efa"], [])
    assert library_path == [IMAGE_PATH]
    assert "/opt/amazon/efa" not in targets


# --- the NVIDIA Container Toolkit ---------------------------------------------------------


@pytest.mark.parametrize("stem", GPU_TREES)
def test_every_gpu_image_gets_nvidia_container_cli(stem: str, tmp_path: Path) -> None:
    """enroot's 98-nvidia.sh needs nvidia-container-cli for every CUDA image: the image ships
    it (images.yaml, sourced) or the role installs the toolkit from a repository the package
    check resolves on that image."""
    from archform.render.writer import write_tree
    from archform.spec.images import load_images
    from archform.verify.checks import packages

    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    write_tree(tmp_path / "out", build_files(loaded))
    [ansible] = sorted(p.parent.parent for p in (tmp_path / "out").rglob("group_vars/all.yml"))
    gv = packages._load(ansible / "group_vars" / "all.yml")
    image = load_images().images[gv["archform_image"]]
    project = packages._Project(ansible, load_images(), image, gv)
    project.run_playbook("site.yml")
    installs = {p for _w, _n, p in project.walk.installs}
    ships = image.ships.get("container_toolkit")
    if ships:
        assert image.ships_package("libnvidia-container-tools"), image.id
        assert "nvidia-container-toolkit" not in installs, "kept, not installed twice"
    else:
        assert "nvidia-container-toolkit" in installs, f"{image.id} lacks the toolkit"
        assert project.source_of("nvidia-container-toolkit") == "repository libnvidia-container"
    result = packages.check_project(ansible, tmp_path / "out")
    assert result.status == "passed", result.detail
