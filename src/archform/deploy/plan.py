"""What a deploy will do: phases, Pulumi projects in dependency order, Ansible hosts.

The plan is computed from the files `archform generate` would write (in memory), so it
follows whatever the targets produce and a dry run touches nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from archform.render.generate import build_files
from archform.spec import BlueprintSet, Document, InferenceFleet, Platform, TrainingCluster
from archform.spec.provider import spec_of
from archform.spec.resolve import resolved_yaml

PHASES = ("generate", "pulumi", "ansible", "acceptance", "serve")
STATE_DIR = ".archform-deploy"
# Registry first (training and fleet read and write it), then the cluster, then the fleet.
_ROLE_ORDER = {"registry": 0, "training": 1, "fleet": 2}


@dataclass(frozen=True, slots=True)
class Registry:
    """The Platform registry a fleet serves from, and how a release gets into it."""

    platform: str
    bucket: str
    region: str
    promote_config: str  # promote.json, relative to the output folder
    approval: str  # manual: the promotion needs --approve to record the release


@dataclass(frozen=True, slots=True)
class PulumiProject:
    """One Pulumi project of the generated tree, deployed as one stack."""

    document: str
    role: str
    path: str
    outputs_file: str | None  # where the stack outputs go for Ansible (training only)
    # stack config set when the stack does not have it yet (e.g. the provider's region)
    defaults: tuple[tuple[str, str], ...] = ()
    # A fleet fed by a Platform registry: brought up without serving objects until the
    # registry holds its release (deploy.serve)
    registry: Registry | None = None


@dataclass(frozen=True, slots=True)
class AnsibleProject:
    """The training cluster's Ansible project."""

    document: str
    path: str
    inventory: str
    hosts: tuple[str, ...]
    cloud: bool
    slurm: bool = True  # the acceptance phase first checks that every Slurm node is up


@dataclass(frozen=True, slots=True)
class DeployPlan:
    """Everything a deploy will touch, in order."""

    out_dir: Path
    digest: str
    documents: tuple[str, ...]
    phases: tuple[str, ...]
    pulumi: tuple[PulumiProject, ...]
    ansible: tuple[AnsibleProject, ...]
    stack: str

    @property
    def state_dir(self) -> Path:
        """Where state, log and runner folders live."""
        return self.out_dir / STATE_DIR

    def describe(self) -> list[str]:
        """Human-readable plan lines (the dry-run output)."""
        lines = [
            f"documents: {', '.join(self.documents)}",
            f"output: {self.out_dir}",
            f"phases: {' -> '.join(self.phases)}",
        ]
        for i, phase in enumerate(self.phases, 1):
            lines.append(f"  {i}. {phase}")
            if phase == "generate":
                lines.append(f"     write the generated tree to {self.out_dir}")
            elif phase == "pulumi":
                for project in self.pulumi:
                    target = f"; outputs -> {project.outputs_file}" if project.outputs_file else ""
                    gate = (
                        f"; infrastructure only while s3://{project.registry.bucket} holds no "
                        "release"
                        if project.registry
                        else ""
                    )
                    lines.append(
                        f"     pulumi up {project.path} (stack {self.stack}, "
                        f"{project.role} of {project.document}){target}{gate}"
                    )
            elif phase == "serve":
                for project in self.pulumi:
                    if project.registry is not None:
                        lines.append(
                            f"     regenerate, then pulumi up {project.path} with the serving "
                            "objects once the registry holds the release (else stop at "
                            f"`archform promote {project.registry.promote_config} ...`)"
                        )
            else:
                playbook = "site.yml" if phase == "ansible" else "validate.yml"
                for ansible in self.ansible:
                    hosts = ", ".join(ansible.hosts)
                    if phase == "acceptance" and ansible.slurm:
                        lines.append("     check that every Slurm node is up (slurmd, sinfo)")
                    lines.append(f"     {ansible.path}/{playbook} on {hosts}")
        return lines


def _prefix(doc: Document, docs: list[Document]) -> str:
    # the same layout as render.generate.build_files
    return f"{doc.name}/" if len(docs) > 1 else ""


def _role(doc: Document) -> str:
    if isinstance(doc.model, Platform):
        return "registry"
    if isinstance(doc.model, InferenceFleet):
        return "fleet"
    return "training"


def _hosts(cluster: TrainingCluster) -> tuple[str, ...]:
    if cluster.hosts is None:
        nodes = cluster.compute.nodes
        return (f"controller + {nodes} compute node(s), addresses from the Pulumi outputs",)
    names = [cluster.hosts.controller.name]
    names += [h.name for h in cluster.hosts.login] + [h.name for h in cluster.hosts.compute]
    return tuple(dict.fromkeys(names))


def _registries(docs: list[Document], paths: set[str]) -> dict[str, Registry]:
    """Fleet name -> the Platform registry it serves from (where archform promote publishes)."""
    found: dict[str, Registry] = {}
    for doc in docs:
        model = doc.model
        if not isinstance(model, Platform):
            continue
        config = f"{_prefix(doc, docs)}promote/promote.json"
        if config not in paths:
            continue  # no promotion for this registry provider: nothing to wait for
        found[model.inference] = Registry(
            platform=doc.name,
            bucket=model.registry.bucket,
            region=model.registry.region,
            promote_config=config,
            approval=model.promotion.approval,
        )
    return found


def digest(blueprints: BlueprintSet, docs: list[Document]) -> str:
    """SHA-256 of the resolved blueprint: a changed blueprint invalidates finished phases."""
    return hashlib.sha256(resolved_yaml(blueprints, docs).encode("utf-8")).hexdigest()


def build_plan(
    blueprints: BlueprintSet, docs: list[Document], out_dir: Path, stack: str = "prod"
) -> DeployPlan:
    """The plan for `docs` generated into `out_dir`."""
    paths = {f.path for f in build_files(blueprints, docs)}
    registries = _registries(docs, paths)
    pulumi: list[PulumiProject] = []
    ansible: list[AnsibleProject] = []
    for doc in docs:
        prefix = _prefix(doc, docs)
        role = _role(doc)
        ansible_dir = f"{prefix}ansible"
        has_ansible = f"{ansible_dir}/site.yml" in paths
        if f"{prefix}pulumi/Pulumi.yaml" in paths:
            outputs = f"{ansible_dir}/pulumi-outputs.json" if has_ansible else None
            defaults: tuple[tuple[str, str], ...] = ()
            key = (
                spec_of(doc.model.registry.provider).registry_region_key
                if isinstance(doc.model, Platform)
                else None
            )
            if isinstance(doc.model, Platform) and key is not None:
                defaults = ((key, doc.model.registry.region),)
            pulumi.append(
                PulumiProject(
                    doc.name,
                    role,
                    f"{prefix}pulumi",
                    outputs,
                    defaults,
                    registries.get(doc.name) if role == "fleet" else None,
                )
            )
        if has_ansible and isinstance(doc.model, TrainingCluster):
            cloud = spec_of(doc.model.placement.provider).cloud
            inventory = "inventory/archform_inventory.py" if cloud else "inventory/hosts.yml"
            slurm = doc.model.scheduler.kind == "slurm"
            ansible.append(
                AnsibleProject(doc.name, ansible_dir, inventory, _hosts(doc.model), cloud, slurm)
            )
    pulumi.sort(key=lambda p: (_ROLE_ORDER[p.role], docs.index(blueprints.by_name[p.document])))
    phases = ["generate"]
    if pulumi:
        phases.append("pulumi")
    if ansible:
        phases += ["ansible", "acceptance"]
    if any(p.registry is not None for p in pulumi):
        phases.append("serve")
    return DeployPlan(
        out_dir=out_dir.resolve(),
        digest=digest(blueprints, docs),
        documents=tuple(f"{d.name} ({d.kind})" for d in docs),
        phases=tuple(phases),
        pulumi=tuple(pulumi),
        ansible=tuple(ansible),
        stack=stack,
    )
