"""Check a generated tree with the real tools available on this machine.

Each check module exposes CHECK (a Check). A check whose tool is missing reports
"skipped" with the reason and the command that installs the tool, never "passed".

Whether skips may pass is decided per result by the name of its check (`SUBSTANTIVE`,
`ADVISORY`) and the run's skip policy (`SkipPolicy`, `blocking_skips`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of one check on one artifact."""

    check: str
    artifact: str
    status: Status
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Check:
    """A validator: which trees it applies to and how to run it."""

    name: str
    applies: Callable[[Path], bool]
    run: Callable[[Path], list[Result]]
    tools: tuple[str, ...] = field(default_factory=tuple)


# A check is substantive when it runs the tool that reads the artifact at deploy time, or
# archform's own static check of what that tool cannot see: when it is skipped, that artifact
# went unchecked, so a run with a substantive skip does not pass unless skips are allowed.
SUBSTANTIVE: dict[str, str] = {
    "ansible": "ansible-inventory, ansible-playbook --syntax-check and ansible-lint (production "
    "profile) on every Ansible project: the programs deploy runs",
    "packages": "every package a task installs resolves on the node image (archform's own walk)",
    "paths": "nothing is asserted before something provides it (archform's own walk)",
    "containers": "enroot containers see the fabric's devices (archform's own walk)",
    "slurm-plugins": "every plugin the Slurm configs name is built or packaged (archform's own)",
    "slurm": "slurmctld of the declared release (or the nearest ones) parses the Slurm configs",
    "pulumi": "every Pulumi program runs under mocks with the real provider SDKs",
    "policy": "the generated CrossGuard policy pack holds on the program's resource graph "
    "(what `pulumi preview --policy-pack` enforces)",
    "kubernetes-validate": "every manifest validates against its Kubernetes version's schemas",
}
# Advisory: a second opinion that nothing at deploy time runs. Its skip fails strict runs only.
ADVISORY: dict[str, str] = {
    "checkov": "Checkov's security-posture checks on the Kubernetes manifests (a third-party "
    "scanner; the manifests are validated by kubernetes-validate)",
}

SkipPolicy = Literal["allow", "substantive", "strict"]


def skip_policy(*, strict: bool, allow_skips: bool, ci: bool) -> SkipPolicy:
    """`allow` with --allow-skips, `strict` with --strict or under CI, else `substantive`."""
    if allow_skips:
        return "allow"
    if strict or ci:
        return "strict"
    return "substantive"


def blocking_skips(results: list[Result], policy: SkipPolicy) -> list[Result]:
    """The skipped results that make the run fail under the policy."""
    if policy == "allow":
        return []
    skipped = [r for r in results if r.status == "skipped"]
    if policy == "strict":
        return skipped
    return [r for r in skipped if r.check not in ADVISORY]


def missing_tools(*tools: str) -> list[str]:
    """Executables not on PATH (the venv's bin dir is searched too)."""
    import sys

    extra = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "") + os.pathsep + extra
    return [t for t in tools if shutil.which(t, path=path) is None]


def tool_path(tool: str) -> str:
    """Full path of a tool (PATH, then the running interpreter's bin dir)."""
    import sys

    found = shutil.which(tool) or shutil.which(tool, path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError(tool)
    return found


def builtin_checks() -> list[Check]:
    """All built-in checks, in a fixed order."""
    from archform.verify import checks

    return list(checks.BUILTIN)


def verify_tree(root: Path, jobs: int = 1) -> list[Result]:
    """Run every applicable check over a generated tree (`jobs` checks at a time)."""
    from archform.verify.runner import run_checks

    return [r for run in run_checks(root, jobs) for r in run.results]
