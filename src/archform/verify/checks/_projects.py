"""Find the Ansible projects in a generated tree and the blueprint each was made from."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archform.spec.models.training import TrainingCluster

if TYPE_CHECKING:
    from archform.render.public import TrainingView

RESOLVED = "resolved-blueprint.yaml"


@dataclass(frozen=True, slots=True)
class Project:
    """One generated ansible/ folder, and its cluster when the resolved blueprint is there."""

    root: Path
    ansible: Path
    cluster: TrainingCluster | None

    @property
    def label(self) -> str:
        """Path of the ansible folder relative to the tree root."""
        return self.ansible.relative_to(self.root).as_posix()


def find_projects(root: Path) -> list[Project]:
    """Every ``**/ansible/site.yml`` folder under root, sorted, with its cluster model."""
    folders = sorted({p.parent for p in root.rglob("ansible/site.yml")})
    clusters = _clusters(root)
    projects = []
    for folder in folders:
        owner = folder.parent.name if folder.parent != root else None
        cluster = clusters.get(owner) if owner else None
        if cluster is None and owner is None and len(clusters) == 1:
            cluster = next(iter(clusters.values()))
        projects.append(Project(root, folder, cluster))
    return projects


def _clusters(root: Path) -> dict[str, TrainingCluster]:
    resolved = root / RESOLVED
    if not resolved.is_file():
        return {}
    from archform.spec import load_paths

    loaded = load_paths([resolved])
    return {
        d.name: d.model
        for d in loaded.documents
        if isinstance(d.model, TrainingCluster) and d.model.scheduler.kind == "slurm"
    }


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for external tools: the interpreter's bin dir first on PATH."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if extra:
        env.update(extra)
    return env


def run(
    args: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run a tool, capturing text output; a timeout becomes rc 124 with a message."""
    try:
        return subprocess.run(
            args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 124, "", f"timed out after {timeout:.0f} s")


def tail(text: str, lines: int = 12) -> str:
    """The last lines of a tool's output, joined with ' | ' for a one-line detail."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:])


def synthetic_outputs(view: TrainingView) -> dict[str, Any]:
    """A `pulumi stack output --json` stand-in with loopback addresses (verification only)."""

    def addr(i: int) -> str:
        return f"127.2.{i // 250}.{i % 250 + 1}"

    index = 0
    controller = [{"name": view.controller, "address": addr(index)}]
    login = []
    for name in view.login:
        index += 1
        login.append({"name": name, "address": addr(index)})
    compute = []
    for group in view.groups:
        for name in group.hostnames:
            index += 1
            compute.append({"name": name, "address": addr(index), "group": group.name})
    lustre = {
        s.name: {"dns_name": f"{s.name}.fsx.invalid", "mount_name": "abcdefgh"}
        for s in view.storage
        if s.kind == "lustre"
    }
    nfs = {
        s.name: {"address": f"{s.name}.nfs.invalid", "export": "/"}
        for s in view.storage
        if s.kind == "nfs"
    }
    return {
        "ansible_inventory": {
            "controller": controller,
            "login": login,
            "compute": compute,
            "lustre": lustre,
            "nfs": nfs,
        }
    }
