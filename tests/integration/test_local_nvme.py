"""Local NVMe across reboots: archform's generated boot unit, run as systemd runs it at every boot.

Stand-ins (tests/enroot_standin.py): a sparse file on a loop device is the instance-store NVMe
disk (this machine has none, and the kernel here has no md driver, so the RAID0 path of the
script is not exercised: only the single-disk path, which finds its file system by the same
label); the unit's ExecStart is run without systemd (PID 1 here is not systemd); enroot's
start-up and mktemp are the loader stand-in. The mount point is moved under a temporary folder.

A boot, a reboot (unmount, run the unit again: instance storage kept its data), then a
stop/start (the disk handed back blank): after each, the mount point is the disk's file
system, the shared enroot folder is mode 1777 and every enroot path exists or is created by
enroot. Only the target proves the RAID0 of real disks, udev's assembly of it at boot, and
the ordering against the DLAMI's own mount.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import enroot_standin as standin
import support
from archform.render.generate import build_files
from archform.spec import load_paths

pytestmark = [pytest.mark.integration, *support.DAEMONS]

# The GCP tree: its unit prepares the disks itself (the DLAMI mounts its own, see below).
STEM = "gcp-a3-mega-tcpxo"
MARKER = "kept-across-reboot"


def _files(stem: str) -> dict[str, str]:
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    return {
        f.path: f.content.decode() for f in build_files(loaded) if f.path.startswith("ansible/")
    }


def _require_root() -> None:
    support.require_tool("losetup", "mkfs.xfs", "wipefs", "blkid", "lsblk", "mountpoint")
    if os.geteuid() != 0:
        if support.REQUIRE_TOOLS:
            pytest.fail("ARCHFORM_REQUIRE_TOOLS=1 but loop devices and mounts need root")
        pytest.skip("loop devices and mounts need root")


class Node:
    """One stand-in node: the generated script, unit, enroot.conf and a loop disk."""

    def __init__(self, files: dict[str, str], tmp: Path, disk: standin.LoopDisk) -> None:
        role = "ansible/roles/local_nvme/files/"
        self.mount = standin.enroot_local_path(files["ansible/group_vars/all.yml"])
        self.stand = tmp / "mnt"
        self.script = tmp / "archform-local-nvme"
        self.script.write_text(files[role + "archform-local-nvme"])
        self.argv = standin.boot_argv(files[role + "archform-local-nvme.service"])
        self.conf = tmp / "enroot.conf"
        text = files["ansible/roles/pyxis_enroot/files/enroot.conf"]
        self.conf.write_text(text.replace(f" {self.mount}/", f" {self.stand}/"))
        self.loader = tmp / "loader"
        self.loader.write_text(standin.LOADER)
        self.home = tmp / "home"
        self.home.mkdir()
        self.disk = disk

    def boot(self) -> None:
        run = standin.run_boot(
            self.script, self.argv, self.disk.device, {self.mount: str(self.stand)}
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert standin.is_mounted(self.stand), f"{self.stand} not mounted: {run.stdout}"

    def enroot_paths(self) -> dict[str, str]:
        run = standin.run_loader(self.loader, self.conf, self.home)
        assert run.returncode == 0, f"enroot would fail: {run.stderr.strip()}"
        paths = standin.resolved(run.stdout)
        for key in standin.PATH_KEYS:
            assert Path(paths[key]).is_dir(), (key, paths[key])
            assert paths[key].startswith(f"{self.stand}/"), (key, paths[key])
        shared = Path(paths["ENROOT_TEMP_PATH"]).parent
        assert standin.mode(shared) == 0o1777, oct(standin.mode(shared))
        return paths


def test_local_nvme_is_mounted_again_after_a_reboot_and_formatted_after_a_stop_start(
    tmp_path: Path,
) -> None:
    _require_root()
    files = _files(STEM)
    with standin.loop_disk(tmp_path / "instance-store.img") as disk:
        node = Node(files, tmp_path, disk)
        try:
            node.boot()
            paths = node.enroot_paths()
            (node.stand / MARKER).write_text("data of the first boot\n")

            # Reboot: the unit runs again on the disk that kept its file system.
            standin.unmount(node.stand)
            node.boot()
            assert (node.stand / MARKER).is_file(), "the reboot re-created the file system"
            assert node.enroot_paths() == paths

            # Stop/start: the disk comes back blank; the unit formats it again.
            standin.unmount(node.stand)
            disk.blank()
            node.boot()
            assert not (node.stand / MARKER).exists()
            assert node.enroot_paths() == paths
        finally:
            standin.unmount(node.stand)


def test_the_dlami_mount_is_kept_and_only_the_enroot_folder_is_made(tmp_path: Path) -> None:
    """--image-mounts: the AMI's own mount (here a loop disk mounted first) is never touched."""
    _require_root()
    files = _files("aws-p5-efa-fsx")
    argv = standin.boot_argv(files["ansible/roles/local_nvme/files/archform-local-nvme.service"])
    assert "--image-mounts" in argv
    with standin.loop_disk(tmp_path / "dlami.img") as disk:
        node = Node(files, tmp_path, disk)
        node.stand.mkdir()
        subprocess.run(["mkfs.ext4", "-q", "-F", disk.device], check=True)
        subprocess.run(["mount", disk.device, str(node.stand)], check=True)
        try:
            (node.stand / MARKER).write_text("the AMI's file system\n")
            node.boot()
            assert (node.stand / MARKER).is_file()
            fstype = subprocess.run(
                ["findmnt", "-no", "FSTYPE", str(node.stand)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            assert fstype == "ext4", "the script re-formatted the image's mount"
            node.enroot_paths()
        finally:
            standin.unmount(node.stand)


def test_a_disk_that_carries_someone_elses_file_system_is_never_formatted(tmp_path: Path) -> None:
    """Only blank disks are striped and formatted; a signature archform did not write stays.

    The script probes the disk itself (blkid -p) rather than trusting udev's database, which
    this machine does not keep (lsblk then reports no FSTYPE at all).
    """
    _require_root()
    files = _files(STEM)
    with standin.loop_disk(tmp_path / "foreign.img") as disk:
        subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "userdata", disk.device], check=True)
        node = Node(files, tmp_path, disk)
        run = standin.run_boot(node.script, node.argv, disk.device, {node.mount: str(node.stand)})
        try:
            assert run.returncode == 0, run.stdout + run.stderr
            assert not standin.is_mounted(node.stand), "a foreign disk was taken"
            label = subprocess.run(
                ["blkid", "-p", "-o", "value", "-s", "LABEL", disk.device],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            assert label == "userdata", "the disk was re-formatted"
        finally:
            standin.unmount(node.stand)


def test_a_local_nvme_entry_is_bind_mounted_on_its_mount_path_at_every_boot(
    tmp_path: Path,
) -> None:
    """`kind: local_nvme` with `mount: /scratch`: after each boot, /scratch is the NVMe's folder."""
    _require_root()
    text = (
        (support.BLUEPRINTS / f"{STEM}.yaml")
        .read_text()
        .replace(
            "\nstorage:\n",
            "\nstorage:\n  - {name: scratch, kind: local_nvme, purpose: scratch,"
            " mount: /scratch}\n",
            1,
        )
    )
    blueprint = tmp_path / "with-scratch.yaml"
    blueprint.write_text(text)
    files = {
        f.path: f.content.decode()
        for f in build_files(load_paths([blueprint]))
        if f.path.startswith("ansible/")
    }
    scratch = tmp_path / "scratch"
    with standin.loop_disk(tmp_path / "instance-store.img") as disk:
        node = Node(files, tmp_path, disk)
        assert "/scratch" in node.argv
        moved = {node.mount: str(node.stand), "/scratch": str(scratch)}
        try:
            for boot in ("first boot", "reboot"):
                run = standin.run_boot(node.script, node.argv, disk.device, moved)
                assert run.returncode == 0, run.stdout + run.stderr
                assert standin.is_mounted(scratch), f"{boot}: {scratch} is not a mount"
                assert standin.mode(scratch) == 0o1777, oct(standin.mode(scratch))
                if boot == "reboot":
                    assert (scratch / "first boot.txt").is_file(), "the reboot lost /scratch"
                (scratch / f"{boot}.txt").write_text("job output\n")
                assert (node.stand / "scratch" / f"{boot}.txt").is_file(), "not on the NVMe"
                node.enroot_paths()
                standin.unmount(scratch)
                standin.unmount(node.stand)
            # Unmounted, both paths are empty folders on the root disk: the data was on the NVMe.
            assert not (node.stand / "scratch").exists()
            assert list(scratch.iterdir()) == []
        finally:
            standin.unmount(scratch)
            standin.unmount(node.stand)
