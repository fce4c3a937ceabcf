"""The Ansible target: a complete Ansible project for a Slurm TrainingCluster.

Output (under ``ansible/``): ansible.cfg, requirements.yml, site.yml, validate.yml,
group_vars/all.yml, an inventory (static hosts.yml on-prem; a dynamic inventory script
reading ``pulumi stack output --json`` in the cloud) and the roles. Slurm configuration
files are rendered here, at generate time, for the blueprint's Slurm version.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from archform.bundled import templates_dir
from archform.render.env import render
from archform.render.hostlist import compress
from archform.render.target import Target
from archform.render.targets.ansible import local_nvme, nccl, slurm_conf, slurm_install
from archform.render.targets.ansible import roles as ansible_roles
from archform.render.targets.ansible.nccl import ProfileSource
from archform.render.targets.ansible.roles import GroupVars, Inventory
from archform.render.targets.ansible.slurm_conf import ConfValue, SlurmContext
from archform.render.targets.common import node_image
from archform.render.targets.common.clouds import cloud
from archform.render.targets.common.training_view import TrainingView, training_view
from archform.render.writer import GeneratedFile
from archform.spec import BlueprintSet, Document
from archform.spec.containers import FabricNeeds, load_containers
from archform.spec.extensions import HOOKS, ExtensionFile, ansible_tasks
from archform.spec.models.training import TrainingCluster
from archform.spec.provider import spec_of

ROOT = "ansible"
TEMPLATES = "ansible"
EXTENSIONS = "extensions"  # the team's task files under ansible/ (blueprint extensions.ansible)
EXECUTABLE = ("inventory/archform_inventory.py",)
# Role files only one fabric kind's tasks use (roles/fabric/tasks/<kind>.yml); other trees
# do not ship them.
FABRIC_ONLY = {
    "roles/fabric/files/rxdm-hook.sh": "gpudirect_tcpxo",
    "roles/fabric/files/99-aperture.rules": "gpudirect_tcpxo",
}


def applies(doc: Document) -> bool:
    """TrainingCluster documents scheduled by Slurm, on every provider."""
    model = doc.model
    return isinstance(model, TrainingCluster) and model.scheduler.kind == "slurm"


def _ansible_range(names: list[str]) -> str | None:
    """gpu001..gpu032 -> 'gpu[001:032]' when the names form one zero-padded range."""
    expr = compress(names)
    if expr.count("[") != 1 or "," in expr or not expr.endswith("]"):
        return None
    prefix, _, body = expr[:-1].partition("[")
    return f"{prefix}[{body.replace('-', ':')}]"


def _group_vars(cluster: TrainingCluster, view: TrainingView, slurm: SlurmContext) -> GroupVars:
    out = ansible_roles.group_vars(view)
    image = node_image.cluster_image(cluster)
    if image.local_nvme:
        out = [
            ("enroot_local_path", image.local_nvme) if k == "enroot_local_path" else (k, v)
            for k, v in out
        ]
    if local_nvme.wanted(view):  # the local_nvme role's variables, where it ships
        nvme = local_nvme.layout(view, str(dict(out)["enroot_local_path"]))
        out += [
            ("local_nvme_folders", nvme.folders),
            ("local_nvme_binds", [{"folder": f, "path": p} for f, p in nvme.binds]),
        ]
    out += node_image.image_group_vars(cluster)
    method = str(dict(out)["slurm_install_method"])
    return out + slurm_install.group_vars(slurm, image, cluster.placement.provider, method)


@dataclass(frozen=True, slots=True)
class StorageNames:
    """Names of the file systems the dynamic inventory reads from the Pulumi outputs."""

    lustre: list[str]
    nfs: list[str]


@dataclass(frozen=True, slots=True)
class AnsibleContext:
    """The view-model every Ansible template receives."""

    view: TrainingView
    roles: list[str]
    group_vars: GroupVars
    inventory: Inventory
    cloud: bool
    slurm: SlurmContext
    nccl_conf: list[tuple[str, ConfValue]]
    nccl_exports: list[tuple[str, ConfValue]]
    nccl_sources: list[ProfileSource]
    nccl_container_mounts: list[str]
    enroot_local_path: str
    # The folder on local NVMe, made mode 1777 at every boot, under which enroot's own mkdir
    # makes each user's paths (enroot.conf).
    enroot_shared_folder: str
    # What the local_nvme role's boot unit makes on the NVMe (render.targets.ansible.local_nvme).
    local_nvme: local_nvme.Layout
    # True when the node image mounts enroot_local_path itself (images.yaml local_nvme_by_image).
    local_nvme_by_image: bool
    # Devices, hook settings and host libraries containers need for the fabric (containers.yaml).
    fabric_needs: FabricNeeds
    # NHC checks the InfiniBand/RoCE fabric ports on this provider (CloudFacts.nhc_fabric_ports).
    nhc_fabric_ports: bool
    storage_names: StorageNames
    # The team's task files per hook (spec.extensions.HOOKS), as paths under ansible/.
    extensions: dict[str, list[str]]


def context(
    cluster: TrainingCluster, extensions: dict[str, list[ExtensionFile]] | None = None
) -> AnsibleContext:
    """The view-model every Ansible template receives."""
    view = training_view(cluster)
    inventory = ansible_roles.inventory_groups(view)
    compute = {
        name: replace(
            hosts,
            range=None
            if any(a is not None for a in hosts.addresses)
            else _ansible_range(hosts.names),
        )
        for name, hosts in inventory.compute.items()
    }
    slurm = slurm_conf.slurm_context(view)
    group_vars = _group_vars(cluster, view, slurm)
    return AnsibleContext(
        view=view,
        roles=ansible_roles.roles_for(view),
        group_vars=group_vars,
        inventory=replace(inventory, compute=compute),
        cloud=spec_of(view.provider).cloud,
        slurm=slurm,
        nccl_conf=nccl.nccl_conf(view),
        nccl_exports=nccl.profile_exports(view),
        nccl_sources=nccl.profile_sources(view),
        nccl_container_mounts=nccl.container_mounts(view),
        enroot_local_path=str(dict(group_vars)["enroot_local_path"]),
        enroot_shared_folder=local_nvme.ENROOT_SHARED_FOLDER,
        local_nvme=local_nvme.layout(view, str(dict(group_vars)["enroot_local_path"])),
        local_nvme_by_image=node_image.cluster_image(cluster).local_nvme_by_image,
        fabric_needs=load_containers().fabric(view.fabric.kind),
        nhc_fabric_ports=cloud(view.provider).nhc_fabric_ports,
        storage_names=StorageNames(
            lustre=[s.name for s in view.storage if s.kind == "lustre"],
            nfs=[s.name for s in view.storage if s.kind == "nfs"],
        ),
        extensions={
            hook: [f"{EXTENSIONS}/{f.path}" for f in (extensions or {}).get(hook, [])]
            for hook in HOOKS
        },
    )


def _wanted(rel: str, ctx: AnsibleContext) -> bool:
    parts = rel.split("/")
    if parts[0] == "roles" and parts[1] not in ctx.roles:
        return False
    if rel in FABRIC_ONLY:
        return bool(ctx.view.fabric.kind == FABRIC_ONLY[rel])
    slurm = ctx.slurm
    conditions = {
        "inventory/hosts.yml": not ctx.cloud,
        "inventory/archform_inventory.py": ctx.cloud,
        "roles/slurm/files/topology.conf": bool(slurm.topology_lines),
        "roles/slurm/files/gres.conf": bool(slurm.gres_lines),
        "roles/slurm/files/plugstack.conf": ctx.view.scheduler.containers == "pyxis",
    }
    return bool(conditions.get(rel, True))


def template_names() -> list[tuple[str, str]]:
    """(source, output) paths relative to templates/ansible/, sorted by output.

    Files ending in ``.j2`` are archform templates (rendered, suffix dropped); every other
    file is static and copied byte for byte, so Ansible's own ``{{ }}`` expressions in role
    tasks need no escaping. An Ansible-side template is therefore named ``x.j2.j2``.
    """
    base = templates_dir() / TEMPLATES
    pairs = []
    for path in base.rglob("*"):
        if not path.is_file() or path.name.startswith("_") or "__pycache__" in path.parts:
            continue
        src = path.relative_to(base).as_posix()
        pairs.append((src, src[: -len(".j2")] if src.endswith(".j2") else src))
    return sorted(pairs, key=lambda pair: pair[1])


def render_cluster(
    cluster: TrainingCluster, extensions: dict[str, list[ExtensionFile]] | None = None
) -> list[GeneratedFile]:
    """All files of the Ansible project for one cluster, with the team's task files."""
    ctx = context(cluster, extensions)
    base = templates_dir() / TEMPLATES
    files: list[GeneratedFile] = []
    for src, rel in template_names():
        if not _wanted(rel, ctx):
            continue
        mode = 0o755 if rel in EXECUTABLE or rel.endswith(".sh") else 0o644
        if src.endswith(".j2"):
            text = render(f"{TEMPLATES}/{src}", ctx)
            files.append(GeneratedFile.text(f"{ROOT}/{rel}", text, mode))
        else:
            files.append(GeneratedFile(f"{ROOT}/{rel}", (base / src).read_bytes(), mode))
    for hook_files in (extensions or {}).values():
        files += [GeneratedFile(f"{ROOT}/{EXTENSIONS}/{f.path}", f.content) for f in hook_files]
    return sorted(files, key=lambda f: f.path)


def _render(doc: Document, blueprints: BlueprintSet) -> list[GeneratedFile]:
    del blueprints
    assert isinstance(doc.model, TrainingCluster)
    rel = doc.model.extensions.ansible
    return render_cluster(doc.model, ansible_tasks(doc.file, rel) if rel else None)


TARGET = Target(name="ansible", applies=applies, render=_render)
