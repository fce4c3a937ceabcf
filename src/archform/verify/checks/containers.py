"""Containers: enroot containers on the generated nodes see the fabric's devices and libraries.

With ``ENROOT_RESTRICT_DEV`` enroot gives every container a /dev of its own that holds only the
basic devices plus what its hooks add back (GPUs through 98-nvidia.sh, mlx4/mlx5 HCAs through
99-mellanox.sh when MELLANOX_VISIBLE_DEVICES is set). This check reads, per Ansible project,
the fabric kind (group_vars) and what the pyxis_enroot role installs into /etc/enroot
(``copy`` tasks whose dest is under mounts.d, environ.d or hooks.d), and requires for the kind
(spec/data/containers.yaml, sourced):

- every device folder the fabric needs is the target of a mounts.d line, unless /dev is not
  restricted;
- every hook setting (environ.d) the fabric needs has its value;
- the node's fabric libraries: the role's hooks, run with bash against an empty stand-in image,
  bind every folder and put the library folders on LD_LIBRARY_PATH; against an image that
  carries its own stack they add nothing.

Only the target proves that the devices open and NCCL loads the plugin in a real container.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archform.spec.containers import FabricNeeds, load_containers
from archform.verify import Check, Result
from archform.verify.checks.packages import _load

NAME = "containers"
ROLE = "pyxis_enroot"
COPY = {"ansible.builtin.copy", "copy"}
ENROOT = "/etc/enroot/"
OFF = {"n", "no", "N", "NO", "No", "f", "false", "F", "FALSE", "False"}


@dataclass
class _Installed:
    """What the role puts under /etc/enroot: dest -> role file (under files/)."""

    conf: Path | None = None
    mounts: list[Path] = field(default_factory=list)
    environ: list[Path] = field(default_factory=list)
    hooks: list[Path] = field(default_factory=list)


def _tasks(role: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(items: Any) -> None:
        for task in items or []:
            if not isinstance(task, dict):
                continue
            out.append(task)
            for key in ("block", "rescue", "always"):
                walk(task.get(key))

    for path in sorted((role / "tasks").glob("*.yml")):
        walk(_load(path))
    return out


def installed(role: Path) -> _Installed:
    """The role's copy tasks into /etc/enroot, by destination folder."""
    found = _Installed()
    for task in _tasks(role):
        args = next((task[k] for k in COPY if k in task), None)
        if not isinstance(args, dict) or "src" not in args:
            continue
        dest = str(args.get("dest", ""))
        if not dest.startswith(ENROOT):
            continue
        src = role / "files" / str(args["src"])
        folder = dest[len(ENROOT) :].split("/")[0]
        if dest == ENROOT + "enroot.conf":
            found.conf = src
        elif folder == "mounts.d":
            found.mounts.append(src)
        elif folder == "environ.d":
            found.environ.append(src)
        elif folder == "hooks.d":
            found.hooks.append(src)
    return found


def _settings(path: Path | None) -> dict[str, str]:
    """KEY value (enroot.conf) or KEY=value (environ.d) lines; the last one of a key wins."""
    out: dict[str, str] = {}
    if path is None or not path.is_file():
        return out
    for raw in path.read_text("utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or " " in key:
            key, _, value = line.partition(" ")
        out[key.strip()] = value.strip()
    return out


def _targets(paths: list[Path]) -> set[str]:
    """Mount targets (field 2) of fstab lines."""
    out: set[str] = set()
    for path in paths:
        if not path.is_file():
            continue
        for raw in path.read_text("utf-8").splitlines():
            fields = raw.split("#", 1)[0].split()
            if len(fields) >= 2:
                out.add(os.path.normpath(fields[1]))
    return out


@dataclass(frozen=True, slots=True)
class HookRun:
    """What the role's hooks appended for one stand-in image."""

    targets: set[str]
    library_path: list[str]
    errors: list[str]


def run_hooks(hooks: list[Path], needs: FabricNeeds, image_has: tuple[str, ...]) -> HookRun:
    """Run the hooks with bash the way enroot does, against a stand-in image and node.

    The node (ARCHFORM_HOST_ROOT) has every folder the fabric's table entry names; the image
    (ENROOT_ROOTFS) is empty apart from `image_has`.
    """
    libs = needs.libraries
    with tempfile.TemporaryDirectory(prefix="archform-enroot-hook-") as tmp:
        base = Path(tmp)
        host, rootfs = base / "host", base / "rootfs"
        rootfs.mkdir()
        for folder in (*libs.bind, *libs.library_path) if libs else ():
            (host / folder.lstrip("/")).mkdir(parents=True, exist_ok=True)
        for folder in image_has:
            (rootfs / folder.lstrip("/")).mkdir(parents=True, exist_ok=True)
        mounts, environ = base / "fstab", base / "environment"
        mounts.write_text("")
        environ.write_text("LD_LIBRARY_PATH=/usr/local/image/lib\n")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "ENROOT_ROOTFS": str(rootfs),
            "ENROOT_MOUNTS": str(mounts),
            "ENROOT_ENVIRON": str(environ),
            "ARCHFORM_HOST_ROOT": str(host),
        }
        errors = []
        for hook in hooks:
            done = subprocess.run(
                ["bash", str(hook)],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            if done.returncode != 0:
                errors.append(f"{hook.name} exited {done.returncode}: {done.stderr.strip()}")
        targets = _targets([mounts])
        value = _settings(environ).get("LD_LIBRARY_PATH", "")
    return HookRun(targets, [p for p in value.split(":") if p], errors)


def project_problems(ansible: Path) -> list[str] | None:
    """What containers on this project's nodes would miss; None when it runs no enroot."""
    role = ansible / "roles" / ROLE
    if not (role / "tasks").is_dir():
        return None
    gv_path = ansible / "group_vars" / "all.yml"
    gv = (_load(gv_path) or {}) if gv_path.is_file() else {}
    kind = str(gv.get("fabric_kind", ""))
    needs = load_containers().fabric(kind)
    found = installed(role)
    problems: list[str] = []
    if found.conf is None:
        problems.append("the role installs no /etc/enroot/enroot.conf")
    restricted = _settings(found.conf).get("ENROOT_RESTRICT_DEV", "") not in OFF | {""}
    targets = _targets(found.mounts)
    if restricted:
        for device in needs.devices:
            if os.path.normpath(device) not in targets:
                problems.append(
                    f"ENROOT_RESTRICT_DEV hides {device} from containers and no mounts.d "
                    f"line binds it ({kind} fabric)"
                )
    environ: dict[str, str] = {}
    for path in found.environ:
        environ.update(_settings(path))
    for key, value in needs.environ:
        if environ.get(key) != value:
            problems.append(
                f"environ.d sets {key}={environ.get(key, '(unset)')}, the {kind} fabric needs "
                f"{key}={value} for enroot's own device hook"
            )
    if needs.libraries:
        problems += _library_problems(found, needs, targets)
    return problems


def _library_problems(found: _Installed, needs: FabricNeeds, static: set[str]) -> list[str]:
    libs = needs.libraries
    assert libs is not None
    if shutil.which("bash") is None:  # pragma: no cover - every supported host has bash
        return ["bash is missing: the enroot hooks cannot be run"]
    empty = run_hooks(found.hooks, needs, ())
    problems = list(empty.errors)
    for folder in libs.bind:
        if os.path.normpath(folder) not in empty.targets | static:
            problems.append(f"no hook or mounts.d line binds the node's {folder} into containers")
    missing = [p for p in libs.library_path if p not in empty.library_path]
    if missing:
        problems.append(
            f"containers' LD_LIBRARY_PATH lacks {', '.join(missing)} ({needs.kind} fabric)"
        )
    if libs.unless_image_has:
        own = run_hooks(found.hooks, needs, libs.unless_image_has[:1])
        if own.targets or own.library_path != ["/usr/local/image/lib"]:
            problems.append(
                f"an image with its own {libs.unless_image_has[0]} still gets the node's "
                "libraries bound over it"
            )
    return problems


def check_project(ansible: Path, root: Path) -> Result | None:
    """One result for a project that installs enroot."""
    problems = project_problems(ansible)
    if problems is None:
        return None
    label = f"{ansible.relative_to(root).as_posix()} (containers)"
    if problems:
        return Result(NAME, label, "failed", "; ".join(problems))
    gv = _load(ansible / "group_vars" / "all.yml") or {}
    kind = str(gv.get("fabric_kind", ""))
    needs = load_containers().fabric(kind)
    what = len(needs.devices) + len(needs.environ) + (1 if needs.libraries else 0)
    return Result(NAME, label, "passed", f"{kind}: {what} device/hook/library needs met")


def applies(root: Path) -> bool:
    """Trees with a generated Ansible project that installs enroot."""
    return any(root.rglob(f"ansible/roles/{ROLE}/tasks/main.yml"))


def run(root: Path) -> list[Result]:
    """One result per Ansible project that installs enroot."""
    folders = sorted({p.parent for p in root.rglob("ansible/site.yml")})
    results = [check_project(folder, root) for folder in folders]
    return [r for r in results if r is not None]


CHECK = Check(name=NAME, applies=applies, run=run)
