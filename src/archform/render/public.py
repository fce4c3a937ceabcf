"""What render offers the stages after it (verify): the only render module they import.

verify re-derives what the generators meant (the Slurm configuration, the training view,
the host image a Slurm build targets) to check the generated files against it; it reaches
those through this interface, never render's internal modules, so render can reorganise
its targets freely. import-linter holds verify to this module.
"""

from __future__ import annotations

from archform.render.env import render
from archform.render.hostlist import expand, int_list
from archform.render.targets.ansible.slurm_conf import expected_leaves, slurm_context
from archform.render.targets.ansible.slurm_install import build_host_image
from archform.render.targets.ansible.target import context as ansible_context
from archform.render.targets.common.clouds import cli_home_dirs, pulumi_sdks
from archform.render.targets.common.training_view import TrainingView, training_view

__all__ = [
    "TrainingView",
    "ansible_context",
    "build_host_image",
    "cli_home_dirs",
    "expand",
    "expected_leaves",
    "int_list",
    "pulumi_sdks",
    "render",
    "slurm_context",
    "training_view",
]
