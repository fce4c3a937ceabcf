"""Stand-ins for what enroot and systemd do with archform's generated enroot files.

Debian 12 (this machine and CI) ships no enroot package, runs no systemd as PID 1 and has no
instance-store NVMe, so the tests that use this module replace exactly those three, following
the vendors' code:

- `LOADER`: enroot's start-up (NVIDIA/enroot v3.5.0, commit c7dc4a6, enroot.in): bash with
  `set -euo pipefail`; each `KEY VALUE` line of enroot.conf whose key matches
  ^ENROOT_[[:upper:]_]+$ is evaluated as `eval echo "${value}"` (an unset variable is fatal)
  and exported unless the environment already sets it (config::load, config::export);
  "n"/"no"/"false" values are unset (config::fini); then
  `(umask 077 && mkdir -p "${ENROOT_CACHE_PATH}" "${ENROOT_DATA_PATH}" "${ENROOT_RUNTIME_PATH}")`,
  the only folders enroot creates. Then what `enroot import`/`create`/`export` do first with the
  temporary path: common::mktmpdir (src/common.sh), `umask 077; mktemp -d -p
  "${ENROOT_TEMP_PATH-}" ...`, which fails when that folder does not exist. It prints the
  resolved paths as KEY=value lines.
- `boot_argv`: the generated archform-local-nvme.service's ExecStart, split into one argv and run
  without a shell, as systemd runs it (systemd.service, "Command lines").
- `LoopDisk`: a sparse file on a loop device stands in for an instance-store NVMe disk; `blank()`
  wipes its signatures, which is what a cloud stop/start hands back.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOADER = r"""#!/bin/bash
# enroot v3.5.0 start-up (enroot.in config section) and common::mktmpdir (src/common.sh).
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
tmp=$(umask 077 && mktemp -d -p "${ENROOT_TEMP_PATH-}" import.XXXXXXXXXX)
rmdir "${tmp}"
for var in ENROOT_RUNTIME_PATH ENROOT_CACHE_PATH ENROOT_DATA_PATH ENROOT_TEMP_PATH; do
    echo "${var}=${!var-}"
done
"""

PATH_KEYS = ("ENROOT_RUNTIME_PATH", "ENROOT_CACHE_PATH", "ENROOT_DATA_PATH", "ENROOT_TEMP_PATH")
SCRIPT = "/usr/local/sbin/archform-local-nvme"


def enroot_local_path(group_vars: str) -> str:
    """enroot_local_path from a generated group_vars/all.yml."""
    found = re.search(r'^enroot_local_path: "?([^"\n]+)"?$', group_vars, re.M)
    assert found, "group_vars has no enroot_local_path"
    return found.group(1)


def boot_argv(unit: str) -> list[str]:
    """The unit's ExecStart as the argv systemd runs (one ExecStart, no shell)."""
    lines = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert len(lines) == 1, f"expected one ExecStart, found {lines}"
    argv = shlex.split(lines[0].removeprefix("ExecStart="))
    assert argv[0] == SCRIPT, argv
    return argv


def run_boot(
    script: Path, argv: list[str], disks: str, moved: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the boot unit's command with `script` for its program, as systemd would.

    `disks` is ARCHFORM_LOCAL_NVME_DISKS (device paths, or "none"); `moved` maps arguments
    (the mount point) to stand-in paths for tests that must not touch the real one.
    """
    args = [(moved or {}).get(a, a) for a in argv[1:]]
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ARCHFORM_LOCAL_NVME_DISKS": disks,
        "ARCHFORM_LOCAL_NVME_WAIT": "0",
    }
    return subprocess.run(
        ["bash", str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_loader(loader: Path, conf: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """The loader stand-in over one enroot.conf, with a login-like environment."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": "/run"}
    return subprocess.run(
        ["bash", str(loader), str(conf)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def resolved(output: str) -> dict[str, str]:
    """KEY=value lines the loader printed."""
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def is_mounted(path: Path) -> bool:
    """True when `path` is a mount point (util-linux mountpoint)."""
    return subprocess.run(["mountpoint", "-q", str(path)], check=False).returncode == 0


class LoopDisk:
    """A sparse file attached to a loop device: a stand-in for one instance-store NVMe disk."""

    def __init__(self, image: Path, device: str) -> None:
        self.image = image
        self.device = device

    def blank(self) -> None:
        """Erase every signature, as a stop/start hands back blank instance storage."""
        subprocess.run(["wipefs", "-a", self.device], check=True, capture_output=True)


@contextmanager
def loop_disk(image: Path, size: str = "512M") -> Iterator[LoopDisk]:
    """Attach a sparse `image` file (XFS needs 300 MB at least) to a free loop device."""
    subprocess.run(["truncate", "-s", size, str(image)], check=True)
    device = subprocess.run(
        ["losetup", "--find", "--show", str(image)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    try:
        yield LoopDisk(image, device)
    finally:
        subprocess.run(["losetup", "-d", device], check=False, capture_output=True)
        image.unlink(missing_ok=True)


def unmount(path: Path) -> None:
    """Unmount `path` if it is mounted (the first half of a simulated reboot)."""
    if is_mounted(path):
        subprocess.run(["umount", str(path)], check=True, capture_output=True)


def mode(path: Path) -> int:
    """Permission bits of `path`, sticky bit included."""
    return path.stat().st_mode & 0o7777
