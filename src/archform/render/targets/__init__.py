"""Built-in targets, one folder per output family and one per cloud.

Layout (each folder is a package; a module holding a target exposes ``TARGET``)::

    common/       shared helpers: training_view (the TrainingCluster view every training
                  target starts from), node_image, pulumi (settings.py skeleton, config
                  keys, project files of a training Pulumi project), clouds (CloudFacts and
                  the lookup of a provider's facts by name)
    ansible/      target ``ansible``: Slurm cluster configuration for every provider
                  (target, roles, slurm_conf, nccl)
    kubernetes/   the Kubernetes objects of an InferenceFleet (objects, weights, traffic,
                  server: the model server from its engine record) and the fleet
                  view's records they are built from; imports nothing of fleet/
    fleet/        target ``fleet``: builds the fleet view (view) and writes its Pulumi
                  project, manifests and smoke playbook
    platform/     target ``platform``: model registry and promotion config
    policy/       target ``policy``: CrossGuard policy pack beside a fleet
    aws/ gcp/ azure/ onprem/
                  one folder per provider: ``facts.py`` (FACTS: SDK pin, fleet system
                  pool type, CLI image, NFS options, local NVMe path, Lustre client
                  packages) and, for clouds, ``training.py``, the ``pulumi-<cloud>`` target
                  (its program modules are templates under templates/pulumi/<cloud>/)

Adding a cloud means a new folder here (facts.py, training.py from common/pulumi.py's
`make_target`), its templates, its name in common/clouds.PROVIDERS and in BUILTIN below.
import-linter keeps the provider folders independent of each other, and the shared
folders free of imports of them (common.clouds loads facts.py by name).
View models are frozen dataclasses, so mypy --strict checks every field a template reads;
render.plain turns a record into plain data where it is embedded as a literal.
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


def targets() -> list[Target]:
    """The built-in targets, by name (names are unique)."""
    by_name: dict[str, Target] = {}
    for target in BUILTIN:
        if target.name in by_name:
            raise ValueError(f"target {target.name!r} listed twice")
        by_name[target.name] = target
    return [by_name[name] for name in sorted(by_name)]
