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
Providers are packages of their own (`archform/providers/<name>/`): each one's render
part lists its targets (RENDER: `TARGETS`, e.g. ``pulumi-<cloud>``), found through the
provider registry, so this package imports no provider and a new provider adds no line
here. import-linter keeps the provider packages independent of each other and of
these shared folders.
View models are frozen dataclasses, so mypy --strict checks every field a template reads;
render.plain turns a record into plain data where it is embedded as a literal.
"""

from __future__ import annotations

from archform import providers
from archform.render.target import Target
from archform.render.targets.ansible import target as ansible
from archform.render.targets.fleet import target as fleet
from archform.render.targets.platform import target as platform
from archform.render.targets.policy import target as policy

# The provider-neutral targets; each provider adds its own (`provider_targets`).
BUILTIN: list[Target] = [
    ansible.TARGET,
    fleet.TARGET,
    platform.TARGET,
    policy.TARGET,
]


def provider_targets() -> list[Target]:
    """Every provider package's own targets (its render part's TARGETS)."""
    out: list[Target] = []
    for name in providers.names():
        listed = getattr(providers.part(name, "render"), "TARGETS", ())
        out += [t for t in listed if isinstance(t, Target)]
    return out


def targets() -> list[Target]:
    """The built-in targets, by name (names are unique)."""
    by_name: dict[str, Target] = {}
    for target in BUILTIN + provider_targets():
        if target.name in by_name:
            raise ValueError(f"target {target.name!r} listed twice")
        by_name[target.name] = target
    return [by_name[name] for name in sorted(by_name)]
