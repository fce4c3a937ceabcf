"""Slurm plugins: every plugin the generated configs name is provided by the chosen install.

A slurmd that cannot load cgroup/v2, or a slurmdbd without accounting_storage/mysql, does not
start, and nothing else in `verify` sees it: slurmctld's parser (the slurm check) runs the
Slurm installed here, not the one the tree installs. This check reads the generated
slurm.conf, cgroup.conf, gres.conf and slurmdbd.conf, lists the plugins they name
(archform.spec.slurm.plugins: CgroupPlugin=autodetect is the image's cgroup version), and
accepts each only when the tree's install path provides it:

- slurm_install_method build: the packages the slurm role installs before compiling (its
  tasks walked as the packages check walks them) satisfy the configure dependency that guards
  the plugin (data/slurm_build.yaml), its enabling configure argument is in
  slurm_build_configure, and gpu/nvml needs NVML on the build host (images.yaml nvml);
- distro: a package the tree installs (or one apt pulls in with it, images.yaml
  distro.<codename>.depends) ships the plugin file (distro.<codename>.plugins).

pyxis (plugstack.conf): Slurm loads a SPANK plugin only when it was compiled against the
spank.h of the same major.minor (src/common/plugin.c, plugin_peek()). So in build mode no task
may install the distribution's libslurm-dev, the task that compiles pyxis must pass
CPPFLAGS=-I<slurm_build_prefix>/include, be keyed on the Slurm version (creates:), and live in
the slurm role after its install step.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from archform.render.public import build_host_image
from archform.spec import slurm
from archform.spec.images import Image, load_images
from archform.spec.slurm import plugins
from archform.verify import Check, Result
from archform.verify.checks.packages import _load, _Project, _render

NAME = "slurm-plugins"
CONFS = {
    "slurm.conf": "roles/slurm/files/slurm.conf",
    "cgroup.conf": "roles/slurm/files/cgroup.conf",
    "gres.conf": "roles/slurm/files/gres.conf",
    "slurmdbd.conf": "roles/slurm/templates/slurmdbd.conf.j2",
}
SLURM_TASKS = "roles/slurm/tasks/"
VERSION_KEYS = re.compile(r"slurm_installed|slurm_build_version|slurm_version")


def _files(ansible: Path, accounting: bool) -> dict[str, list[list[tuple[str, str]]]]:
    out = {}
    for name, rel in CONFS.items():
        path = ansible / rel
        if path.is_file() and (name != "slurmdbd.conf" or accounting):
            out[name] = plugins.parse_conf(path.read_text("utf-8"))
    return out


def _provided_build(
    project: _Project, gv: dict[str, Any], version: slurm.SlurmVersion, image: Image
) -> tuple[set[str], set[str]]:
    """(plugins built, packages the slurm role installs) for the build path."""
    installed = {p for where, _w, p in project.walk.installs if where.startswith(SLURM_TASKS)}
    configure = {str(a) for a in gv.get("slurm_build_configure") or []}
    provider = str(gv.get("archform_provider", ""))
    nvml_here = build_host_image(image, provider).nvml
    nvml = bool(nvml_here) and gv.get("slurm_build_nvml_dir") == nvml_here
    return plugins.build_provides(version, installed, nvml, configure), installed


def _provided_distro(project: _Project, image: Image) -> dict[str, str]:
    """Plugin -> package, for the packages the tree installs on a distro install."""
    table = load_images()
    installed = {p for _where, _w, p in project.walk.installs}
    depends = table.distro_depends(image.codename)
    for package in list(installed):
        installed |= set(depends.get(package, ()))
    return {
        plugins.plugin_of(so): package
        for so, package in table.distro_plugins(image.codename).items()
        if package in installed
    }


def _plugin_problems(project: _Project, gv: dict[str, Any], image: Image) -> list[str]:
    ansible = project.ansible
    version = slurm.parse_version(str(gv.get("slurm_build_version") or gv["slurm_version"]))
    files = _files(ansible, bool(gv.get("slurm_accounting")))
    named = plugins.named_plugins(files, version, image.cgroup)
    method = str(gv.get("slurm_install_method"))
    problems = []
    if method == "build":
        built, installed = _provided_build(project, gv, version, image)
        for n in named:
            if n.plugin not in built:
                lacking = plugins.missing_packages(n.plugin, installed)
                why = (
                    f"the build installs no {', '.join(lacking)}"
                    if lacking
                    else f"the build does not enable it ({plugins.provider_hint(n.plugin)})"
                )
                problems.append(
                    f"{n.file}: {n.line} needs {n.plugin} ({n.so}), which the Slurm "
                    f"{version} build does not produce: {why}"
                )
    else:
        shipped = _provided_distro(project, image)
        for n in named:
            if n.plugin not in shipped:
                problems.append(
                    f"{n.file}: {n.line} needs {n.plugin} ({n.so}), which no package installed "
                    f"on {image.id} ({image.codename} slurm-wlm) ships"
                )
    return problems


def _task_files(ansible: Path) -> list[Path]:
    return sorted(ansible.glob("roles/*/tasks/*.yml"))


def _walk_tasks(tasks: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        out.append(task)
        for key in ("block", "rescue", "always"):
            out += _walk_tasks(task.get(key) or [])
    return out


def _command(task: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    for key in ("ansible.builtin.shell", "ansible.builtin.command", "shell", "command"):
        if key in task:
            args = task[key]
            return (args, {}) if isinstance(args, str) else (str(args.get("cmd", "")), args)
    return "", {}


def _facts(facts: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any]:
    """set_fact values that render from the group and role variables (others are skipped)."""
    out = {}
    for key, value in facts.items():
        try:
            out[key] = _render(value, variables)
        except Exception:  # a fact on registered results or host facts: unknown statically
            continue
    return out


def _pyxis_problems(project: _Project, gv: dict[str, Any]) -> list[str]:
    ansible = project.ansible
    if not gv.get("slurm_pyxis") or gv.get("slurm_install_method") != "build":
        return []
    problems = [
        f"{where}: installs libslurm-dev (the distribution's Slurm headers) beside a Slurm "
        f"{gv.get('slurm_build_version')} build: pyxis compiled against them is refused"
        for where, _w, package in project.walk.installs
        if package == "libslurm-dev"
    ]
    defaults = _load(ansible / "roles/slurm/defaults/main.yml") or {}
    variables = {**defaults, **gv, "ansible_facts": {"architecture": "x86_64"}}
    prefix = str(_render(defaults.get("slurm_build_prefix", ""), variables))
    builds = []
    for path in _task_files(ansible):
        facts: dict[str, Any] = {}
        for task in _walk_tasks(_load(path)):
            fact = task.get("ansible.builtin.set_fact") or task.get("set_fact")
            if isinstance(fact, dict):
                facts.update(fact)
            cmd, args = _command(task)
            if "make" in cmd and "pyxis" in str(args.get("chdir", "")):
                builds.append((path.relative_to(ansible).as_posix(), task, args, facts))
    if not builds:
        return [*problems, "plugstack.conf loads pyxis, but no task compiles it"]
    main = (ansible / SLURM_TASKS / "main.yml").read_text("utf-8")
    for rel, task, args, facts in builds:
        label = f"{rel}: {task.get('name', '?')!r}"
        flags = str((task.get("environment") or {}).get("CPPFLAGS", ""))
        try:
            rendered = str(_render(flags, {**variables, **_facts(facts, variables)}))
        except Exception as exc:
            problems.append(f"{label}: cannot render CPPFLAGS ({exc})")
            continue
        want = f"-I{prefix}/include"
        if want not in rendered.split():
            problems.append(
                f"{label}: compiles pyxis with CPPFLAGS={rendered!r}, not {want!r} (the headers "
                f"of the Slurm {gv.get('slurm_build_version')} that runs): Slurm refuses it"
            )
        creates = str(args.get("creates", ""))
        creates += " ".join(str(v) for k, v in facts.items() if k in creates)  # via set_fact
        if not VERSION_KEYS.search(creates):
            problems.append(f"{label}: its creates: is not keyed on the Slurm version")
        name = Path(rel).name
        if not rel.startswith(SLURM_TASKS) or main.find(name) < main.find("install_"):
            problems.append(f"{label}: pyxis is compiled before the slurm role installs Slurm")
    return problems


def check_project(ansible: Path, root: Path) -> Result:
    """Plugins and pyxis of one Ansible project against its install path."""
    label = f"{ansible.relative_to(root).as_posix()} (slurm plugins)"
    gv = _load(ansible / "group_vars" / "all.yml") or {}
    table = load_images()
    image = table.images.get(str(gv.get("archform_image")))
    if image is None:
        return Result(NAME, label, "failed", "group_vars/all.yml names no known archform_image")
    project = _Project(ansible, table, image, gv)
    project.run_playbook("site.yml")
    problems = list(
        dict.fromkeys(_plugin_problems(project, gv, image) + _pyxis_problems(project, gv))
    )
    if problems:
        return Result(NAME, label, "failed", "; ".join(problems))
    files = _files(ansible, bool(gv.get("slurm_accounting")))
    version = slurm.parse_version(str(gv.get("slurm_build_version") or gv["slurm_version"]))
    count = len(plugins.named_plugins(files, version, image.cgroup))
    how = gv.get("slurm_install_method")
    return Result(
        NAME, label, "passed", f"{count} plugins named, all provided by the {how} install"
    )


def applies(root: Path) -> bool:
    """Trees with a generated slurm role."""
    return any(root.rglob("ansible/roles/slurm/files/slurm.conf"))


def run(root: Path) -> list[Result]:
    """One result per Ansible project with a slurm role."""
    folders = sorted({p.parents[3] for p in root.rglob("ansible/roles/slurm/files/slurm.conf")})
    return [check_project(f, root) for f in folders if (f / "group_vars" / "all.yml").is_file()]


CHECK = Check(name=NAME, applies=applies, run=run)
