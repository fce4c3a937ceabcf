"""Where the local_nvme role puts things on a node's instance-local NVMe.

The boot unit mounts the NVMe on one path per node image (the cloud's, or the image's own, such
as the DLAMI's /opt/dlami/nvme). On it the unit makes, mode 1777, the folders other roles keep
there (enroot's, when pyxis is on) and one folder per blueprint `kind: local_nvme` entry whose
`mount:` is elsewhere, bind-mounted on that path, so a job finds the scratch space where the
blueprint says it is. An entry without `mount:`, or whose mount is the NVMe's own path, is the
NVMe itself; a mount below it is a folder there.
"""

from __future__ import annotations

from dataclasses import dataclass

from archform.render.targets.common.training_view import TrainingView

ENROOT_SHARED_FOLDER = "enroot"
"""The folder on local NVMe under which enroot's own mkdir makes each user's paths."""


@dataclass(frozen=True, slots=True)
class Layout:
    """The folders the boot unit makes on the NVMe and the bind mounts it sets up."""

    folders: list[str]
    binds: list[tuple[str, str]]  # (folder on the NVMe, the entry's mount path)


def layout(view: TrainingView, mountpoint: str) -> Layout:
    """The layout for a cluster whose nodes mount their local NVMe on `mountpoint`."""
    folders = [ENROOT_SHARED_FOLDER] if view.scheduler.containers == "pyxis" else []
    binds: list[tuple[str, str]] = []
    root = mountpoint.rstrip("/")
    for entry in view.storage:
        if entry.kind != "local_nvme" or entry.mount is None:
            continue
        path = entry.mount.rstrip("/") or "/"
        if path == root:
            continue
        if path.startswith(root + "/"):
            folders.append(path[len(root) + 1 :])
        else:
            binds.append((entry.name, path))
    return Layout(folders=folders, binds=binds)


def wanted(view: TrainingView) -> bool:
    """Whether the cluster ships the local_nvme role (enroot's state, or a local_nvme entry)."""
    return view.scheduler.containers == "pyxis" or any(s.kind == "local_nvme" for s in view.storage)
