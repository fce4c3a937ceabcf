"""Built-in checks. Each module exposes CHECK; add it to BUILTIN in run order."""

from __future__ import annotations

from archform.verify import Check
from archform.verify.checks import (
    ansible,
    checkov,
    containers,
    kubernetes,
    packages,
    paths,
    pulumi,
    slurm,
    slurm_plugins,
)

BUILTIN: list[Check] = [
    ansible.CHECK,
    packages.CHECK,
    paths.CHECK,
    containers.CHECK,
    slurm_plugins.CHECK,
    slurm.CHECK,
    pulumi.CHECK,
    kubernetes.CHECK,
    checkov.CHECK,
]
