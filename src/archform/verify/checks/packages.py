"""Packages: every package an Ansible task installs resolves on the chosen node image.

ansible-lint proves that `apt: name: doca-ofed` is well-formed, not that apt will find it.
This check walks the generated playbooks as Ansible would (site.yml plays, their roles with
role defaults/vars and play vars, include_tasks, blocks, loops), renders task arguments with
the group variables, and accepts a package only when it comes from one of:

- the image itself (the image table's `preinstalled` patterns for `archform_image`),
- the image's distribution archive (the table's `distro.<codename>.packages`),
- a repository a task of the same tree configures (deb822_repository / apt_repository) whose
  URI is a repository of the table with a suite for the image's release, or
- a .deb file the task names directly (release download or a package built on the node).

Conditions that depend only on group variables are evaluated (a block skipped on this image
installs nothing); conditions on host facts are assumed true.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined
from jinja2.nativetypes import NativeEnvironment
from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.nodes import Node, ScalarNode

from archform.spec.images import Image, ImageTable, load_images
from archform.verify import Check, Result

NAME = "packages"
APT = {"ansible.builtin.apt", "apt"}
REPO = {
    "ansible.builtin.deb822_repository",
    "deb822_repository",
    "ansible.builtin.apt_repository",
    "apt_repository",
}
INCLUDE = {"ansible.builtin.include_tasks", "include_tasks", "ansible.builtin.import_tasks"}
# Host facts the package names and repository URIs use, per image release.
FACTS = {
    "jammy": ("Ubuntu", "22.04"),
    "noble": ("Ubuntu", "24.04"),
    "bookworm": ("Debian", "12"),
}


class _Constructor(SafeConstructor):
    """Reads Ansible's `!unsafe` tag (literal text, never templated) as a plain string."""


def _scalar(constructor: SafeConstructor, node: Node) -> Any:
    assert isinstance(node, ScalarNode)
    return constructor.construct_scalar(node)


_Constructor.add_constructor("!unsafe", _scalar)


def _load(path: Path) -> Any:
    reader = YAML(typ="safe", pure=True)
    reader.Constructor = _Constructor
    return reader.load(path.read_text("utf-8"))


def _bool(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on", "y")


def _regex_escape(value: Any) -> str:
    return re.escape(str(value))


_ENV = NativeEnvironment(undefined=StrictUndefined)
_ENV.filters["bool"] = _bool
_ENV.filters["regex_escape"] = _regex_escape


@dataclass
class _Walk:
    """What a walk over one Ansible project found."""

    repos: set[str] = field(default_factory=set)
    unknown_repos: list[str] = field(default_factory=list)
    installs: list[tuple[str, str, str]] = field(default_factory=list)  # file, task, package
    unresolved: list[str] = field(default_factory=list)


def _render(value: Any, variables: dict[str, Any]) -> Any:
    """Render a task argument; nested templates (vars that hold templates) are rendered too."""
    for _ in range(4):
        if isinstance(value, list):
            return [_render(v, variables) for v in value]
        if not isinstance(value, str) or "{{" not in value:
            return value
        value = _ENV.from_string(value).render(variables)
    return value


def _may_run(when: Any, variables: dict[str, Any]) -> bool:
    """False only when a condition on known variables is false; fact conditions count as true."""
    if when is None:
        return True
    parts = when if isinstance(when, list) else [when]
    for part in parts:
        if isinstance(part, bool):
            if not part:
                return False
            continue
        for clause in re.split(r"\s+and\s+(?![^()]*\))", str(part)):
            try:
                result = _ENV.from_string("{{ (" + clause + ") }}").render(variables)
            except Exception:
                continue
            if not result:
                return False
    return True


def _module(task: dict[str, Any]) -> tuple[str, Any]:
    for key, value in task.items():
        if key in APT | REPO | INCLUDE:
            return key, value
    return "", None


def _role_vars(ansible: Path, role: str, part: str) -> dict[str, Any]:
    path = ansible / "roles" / role / part / "main.yml"
    return dict(_load(path) or {}) if path.is_file() else {}


class _Project:
    def __init__(self, ansible: Path, table: ImageTable, image: Image, gv: dict[str, Any]):
        self.ansible = ansible
        self.table = table
        self.image = image
        distribution, version = FACTS.get(image.codename or "", ("Ubuntu", "22.04"))
        self.facts = {
            "ansible_kernel": "{kernel}",
            "ansible_architecture": "x86_64",
            "ansible_distribution": distribution,
            "ansible_distribution_version": version,
            "ansible_distribution_release": image.codename or "",
            "ansible_os_family": "Debian",
        }
        self.gv = gv
        self.walk = _Walk()

    def run_playbook(self, name: str) -> None:
        path = self.ansible / name
        for play in _load(path) or []:
            play_vars = {**self.facts, **self.gv, **(play.get("vars") or {})}
            for entry in play.get("roles") or []:
                role = entry if isinstance(entry, str) else entry["role"]
                extra = {} if isinstance(entry, str) else entry.get("vars") or {}
                # Ansible's precedence: role defaults < group_vars < play vars < role vars <
                # role parameters.
                variables = {
                    **self.facts,
                    **_role_vars(self.ansible, role, "defaults"),
                    **play_vars,
                    **_role_vars(self.ansible, role, "vars"),
                    **extra,
                }
                tasks = self.ansible / "roles" / role / "tasks"
                if not (tasks / "main.yml").is_file():
                    continue  # a missing role is the ansible check's finding (syntax-check)
                self.tasks(tasks / "main.yml", tasks, variables)
            for task in play.get("tasks") or []:
                self.task(task, path, path.parent, play_vars)

    def tasks(self, path: Path, base: Path, variables: dict[str, Any]) -> None:
        for task in _load(path) or []:
            self.task(task, path, base, variables)

    def task(self, task: dict[str, Any], path: Path, base: Path, variables: dict[str, Any]) -> None:
        if not _may_run(task.get("when"), variables):
            return
        for key in ("block", "rescue", "always"):
            for inner in task.get(key) or []:
                self.task(inner, path, base, variables)
        module, args = _module(task)
        label = f"{path.relative_to(self.ansible).as_posix()}: {task.get('name', '?')!r}"
        try:
            if module in INCLUDE:
                target = args if isinstance(args, str) else args.get("file")
                self.tasks(base / str(_render(target, variables)), base, variables)
            elif module in REPO:
                self.repository(args, variables, label)
            elif module in APT and isinstance(args, dict) and "deb" not in args:
                for item in self.items(task, variables):
                    names = _render(args.get("name"), {**variables, "item": item})
                    for name in names if isinstance(names, list) else [names]:
                        self.walk.installs.append((label, str(name), str(name).split("=")[0]))
        except Exception as exc:
            self.walk.unresolved.append(f"{label}: cannot render ({exc})")

    def items(self, task: dict[str, Any], variables: dict[str, Any]) -> list[Any]:
        loop = task.get("loop", task.get("with_items"))
        if loop is None:
            return [None]
        rendered = _render(loop, variables)
        return list(rendered) if isinstance(rendered, list) else [rendered]

    def repository(self, args: dict[str, Any], variables: dict[str, Any], label: str) -> None:
        uri = _render(args.get("uris") or args.get("repo") or "", variables)
        uri = str(uri[0] if isinstance(uri, list) else uri)
        words = [w for w in uri.split() if "://" in w]
        uri = words[0] if words else uri
        for repo in self.table.repositories.values():
            pattern = re.escape(repo.uri.rstrip("/"))
            pattern = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", pattern)
            if re.fullmatch(pattern + "/?", uri):
                if repo.suite(self.image.codename or "") is not None:
                    self.walk.repos.add(repo.name)
                else:
                    self.walk.unknown_repos.append(
                        f"{label}: {repo.name} has no suite for {self.image.codename}"
                    )
                return
        self.walk.unknown_repos.append(f"{label}: repository {uri} is not in the image table")

    def source_of(self, package: str) -> str | None:
        if self.image.ships_package(package):
            return f"image {self.image.id}"
        distro = self.table.distro_packages(self.image.codename)
        if any(fnmatch.fnmatchcase(package, p) for p in distro):
            return f"{self.image.codename} archive"
        for name in sorted(self.walk.repos):
            if any(fnmatch.fnmatchcase(package, p) for p in self.table.repositories[name].provides):
                return f"repository {name}"
        return None


def check_project(ansible: Path, root: Path) -> Result:
    """Resolve every installed package of one Ansible project against its image."""
    label = f"{ansible.relative_to(root).as_posix()} (packages)"
    gv_path = ansible / "group_vars" / "all.yml"
    gv = _load(gv_path) if gv_path.is_file() else {}
    table = load_images()
    image = table.images.get(str((gv or {}).get("archform_image")))
    if image is None:
        return Result(NAME, label, "failed", "group_vars/all.yml names no known archform_image")
    project = _Project(ansible, table, image, gv)
    for playbook in ("site.yml", "validate.yml"):
        if (ansible / playbook).is_file():
            project.run_playbook(playbook)
    walk = project.walk
    problems = list(walk.unresolved) + list(walk.unknown_repos)
    seen: set[str] = set()
    for where, _written, package in walk.installs:
        if project.source_of(package) is None and package not in seen:
            seen.add(package)
            problems.append(f"{where}: package {package!r} has no source on image {image.id}")
    if problems:
        return Result(NAME, label, "failed", "; ".join(problems))
    count = len({p for _w, _n, p in walk.installs})
    repos = ", ".join(sorted(walk.repos)) or "none"
    return Result(NAME, label, "passed", f"{count} packages on {image.id}; repositories: {repos}")


def applies(root: Path) -> bool:
    """Trees with a generated Ansible project that names its node image."""
    return any(root.rglob("ansible/group_vars/all.yml"))


def run(root: Path) -> list[Result]:
    """One result per Ansible project."""
    folders = sorted({p.parent.parent for p in root.rglob("ansible/group_vars/all.yml")})
    return [check_project(folder, root) for folder in folders if (folder / "site.yml").is_file()]


CHECK = Check(name=NAME, applies=applies, run=run)
