"""Built-in targets, one folder per output family and one per cloud.

Layout (each folder is a package; a module holding a target exposes ``TARGET``)::

    common/       shared helpers: training_view (the TrainingCluster view model every
                  training target starts from), node_image, pulumi (settings.py skeleton,
                  config keys, project files of a training Pulumi project)
    ansible/      target ``ansible``: Slurm cluster configuration for every provider
                  (target, roles, slurm_conf, nccl)
    kubernetes/   the Kubernetes objects of an InferenceFleet (objects, weights, traffic)
    fleet/        target ``fleet``: the fleet view model and its Pulumi project/manifests
    platform/     target ``platform``: model registry and promotion config
    policy/       target ``policy``: CrossGuard policy pack beside a fleet
    aws/ gcp/ azure/
                  one folder per cloud: ``training.py`` is its ``pulumi-<cloud>`` training
                  target (settings only; the program modules are templates under
                  templates/pulumi/<cloud>/)

Adding a cloud means a new folder here with its ``training.py`` (a `make_target` call
from common/pulumi.py), its templates, and an entry in BUILTIN below. On-prem clusters have
no folder: they are the ansible target alone (addresses come from the blueprint's hosts).
View models are frozen dataclasses, so mypy --strict checks every field a template reads.
"""

from __future__ import annotations

from archform.render.target import Target
from archform.render.targets.ansible import target as ansible
from archform.render.targets.aws import training as aws_training
from archform.render.targets.azure import training as azure_training
from archform.render.targets.fleet import target as fleet
from archform.render.targets.gcp import training as gcp_training
from archform.render.targets.platform import target as platform
from archform.render.targets.policy import target as policy

BUILTIN: list[Target] = [
    ansible.TARGET,
    fleet.TARGET,
    platform.TARGET,
    policy.TARGET,
    aws_training.TARGET,
    azure_training.TARGET,
    gcp_training.TARGET,
]
