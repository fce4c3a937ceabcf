"""Paths: nothing is asserted or named before something provides it, on the host that needs it.

ansible-lint and a syntax check prove that `stat` + `assert` is well-formed, not that anything
creates the file before the assert runs. This check walks site.yml (then validate.yml) once per
host kind (controller, login, compute) as Ansible would run it on a fresh node of the chosen
image: plays of that kind, roles with their defaults and vars under the group variables,
include_tasks, blocks, loops, and `when:` evaluated on the group variables and the hardware
facts the blueprint implies (ansible_local.archform: GPUs and fabric devices on compute nodes
only). It keeps the set of paths provided so far, from, in this order:

- the image (images.yaml `paths` of `archform_image`);
- an earlier task: copy/template/get_url/git dest, file path (directory, touch, link),
  blockinfile/lineinfile with `create`, mount points, `creates:` of a command, the files a
  known program writes or a package installs, the sysfs folder of a module modprobe loads
  (data/paths.yaml);
- the service itself: configuration keys a service creates (enroot's `mkdir -p` of its cache,
  data and runtime paths; slurmd's spool folder, slurmctld's state folder), and device paths
  the kernel or an installed udev rule makes at boot (data/paths.yaml devices).

Reported: a path a task asserts (stat + assert/fail on `.stat.exists`, `removes:`, the absolute
program of a command that is not a probe: not `failed_when: false`, not guarded by a stat of its
path) that nothing before it provides; a `creates:` path already provided
(the command never runs); and, at the end of the run, every path a generated configuration
names (slurm.conf programs and folders, plugstack includes, enroot.conf paths, enroot mounts,
NCCL plugin and topology files) on the hosts that read it, that nothing provides.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from archform.spec.images import Image, load_images
from archform.spec.provided_paths import KINDS, ProvidedPaths, load_provided_paths
from archform.verify import Check, Result
from archform.verify.checks import _config_paths
from archform.verify.checks.packages import _load, _may_run, _render

NAME = "paths"
COMMAND = {"ansible.builtin.command", "command", "ansible.builtin.shell", "shell"}
COPY = {"ansible.builtin.copy", "copy", "ansible.builtin.template", "template"}
INCLUDE = {"ansible.builtin.include_tasks", "include_tasks", "ansible.builtin.import_tasks"}
DEST = {
    "ansible.builtin.get_url": "dest",
    "ansible.builtin.git": "dest",
    "ansible.posix.mount": "path",
}
EDIT = {"ansible.builtin.blockinfile", "ansible.builtin.lineinfile"}
EXISTS = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\.stat\.exists\b")


def _facts(kind: str, gv: dict[str, Any]) -> dict[str, Any]:
    """What Ansible would know about a host of this kind: archform.fact for the blueprint."""
    compute = kind == "compute"
    fabric, rails = gv.get("fabric_kind"), int(gv.get("fabric_rails") or 0)
    local = {
        "nvidia_gpus": int(gv.get("nvidia_gpus_per_node") or 0) if compute else 0,
        "mellanox_nics": rails if compute and fabric in ("infiniband", "roce") else 0,
        "infiniband_devices": rails if compute and fabric == "infiniband" else 0,
        "efa_devices": rails if compute and fabric == "efa" else 0,
        "tcpxo_aperture_devices": rails if compute and fabric == "gpudirect_tcpxo" else 0,
        "lustre_loaded": False,
    }
    return {
        "ansible_local": {"archform": local},
        "group_names": [kind, "slurm_cluster"],
        "inventory_hostname": f"{kind}-host",
        "ansible_service_mgr": "systemd",
        "ansible_facts": {"architecture": "x86_64"},
    }


def _kinds_of(hosts: str) -> set[str]:
    out: set[str] = set()
    for name in re.split(r"[:,]", hosts):
        name = name.strip().lstrip("&!")
        if name in ("all", "slurm_cluster"):
            out |= set(KINDS)
        elif name.startswith("compute"):
            out.add("compute")
        elif name in KINDS:
            out.add(name)
    return out


def _module(task: dict[str, Any]) -> tuple[str, Any]:
    for key, value in task.items():
        if "." in key or key in COMMAND | COPY | INCLUDE | {"file", "stat", "assert", "fail"}:
            name = key if "." in key else f"ansible.builtin.{key}"
            return name, value
    return "", None


@dataclass
class _Host:
    """The walk of one host kind: what is provided so far, and the findings."""

    kind: str
    provided: dict[str, str] = field(default_factory=dict)  # path -> who provides it
    trees: dict[str, str] = field(default_factory=dict)  # folder provided whole -> who
    registered: dict[str, list[str]] = field(default_factory=dict)  # stat register -> paths
    configs: list[tuple[str, str, str]] = field(default_factory=list)  # dest, text, label
    problems: list[str] = field(default_factory=list)
    asserted: int = 0

    def has(self, path: str, *, trees: bool = True) -> str | None:
        """Who provides `path` (itself, or something below it), else None.

        `trees`: also count folders provided whole (an install or an archive whose exact file
        list archform does not model); off where "certainly there" is meant (a `creates:`).
        """
        path = path.rstrip("/") or "/"
        if path in self.provided:
            return self.provided[path]
        prefix = path + "/"
        below = next((who for p, who in self.provided.items() if p.startswith(prefix)), None)
        if below is not None or not trees:
            return below
        return next((w for t, w in self.trees.items() if prefix.startswith(t + "/")), None)

    def add(self, path: str, who: str) -> None:
        self.provided.setdefault(posixpath.normpath(path), who)


class _Walker:
    def __init__(
        self, ansible: Path, gv: dict[str, Any], image: Image, host: _Host, cache: dict[Path, Any]
    ):
        self.ansible, self.gv, self.image, self.host = ansible, gv, image, host
        self.cache = cache  # parsed YAML files, shared by the walks of one project
        self.table: ProvidedPaths = load_provided_paths()
        self.facts = _facts(host.kind, gv)
        for path in image.paths:
            host.add(path, f"image {image.id}")

    def playbook(self, name: str) -> None:
        for play in self.load(self.ansible / name) or []:
            if self.host.kind not in _kinds_of(str(play.get("hosts", ""))):
                continue
            play_vars = {**self.facts, **self.gv, **(play.get("vars") or {})}
            for entry in play.get("roles") or []:
                role = entry if isinstance(entry, str) else entry["role"]
                extra = {} if isinstance(entry, str) else entry.get("vars") or {}
                folder = self.ansible / "roles" / role
                defaults = self.vars(folder / "defaults" / "main.yml")
                role_vars = self.vars(folder / "vars" / "main.yml")
                variables = {**defaults, **play_vars, **role_vars, **extra}
                if (folder / "tasks" / "main.yml").is_file():
                    self.tasks(folder / "tasks" / "main.yml", folder, variables)
            for task in play.get("tasks") or []:
                self.task(task, self.ansible / name, self.ansible, play_vars)

    def elsewhere(self, task: dict[str, Any]) -> bool:
        """True when an include runs on a host of another kind (`apply: delegate_to:`).

        What its tasks provide then lands on that group's host, not here.
        """
        apply = (task.get("args") or {}).get("apply") or {}
        target = str(apply.get("delegate_to") or "")
        found = re.search(r"groups\[['\"](\w+)['\"]\]", target)
        return found is not None and found.group(1) in KINDS and found.group(1) != self.host.kind

    def load(self, path: Path) -> Any:
        if path not in self.cache:
            self.cache[path] = _load(path)
        return self.cache[path]

    def vars(self, path: Path) -> dict[str, Any]:
        return dict(self.load(path) or {}) if path.is_file() else {}

    def tasks(self, path: Path, role: Path, variables: dict[str, Any]) -> None:
        for task in self.load(path) or []:
            self.task(task, path, role, variables)

    def task(self, task: dict[str, Any], path: Path, role: Path, variables: dict[str, Any]) -> None:
        if not _may_run(task.get("when"), variables):
            return
        for key in ("block", "rescue", "always"):
            for inner in task.get(key) or []:
                self.task(inner, path, role, variables)
        module, args = _module(task)
        label = f"{path.relative_to(self.ansible).as_posix()}: {task.get('name', '?')!r}"
        if module in INCLUDE:
            if self.elsewhere(task):
                return
            target = args if isinstance(args, str) else args.get("file")
            try:
                self.tasks(role / "tasks" / str(_render(target, variables)), role, variables)
            except Exception as exc:
                self.host.problems.append(f"{label}: cannot render the included file ({exc})")
            return
        if not module:
            return
        args = {**(task.get("args") or {}), **(args if isinstance(args, dict) else {"cmd": args})}
        for item in self.items(task, variables):
            scope = {**variables, "item": item} if item is not _NO_ITEM else variables
            self.step(module, args, task, scope, role, label)

    def items(self, task: dict[str, Any], variables: dict[str, Any]) -> list[Any]:
        loop = task.get("loop", task.get("with_items"))
        if loop is None:
            return [_NO_ITEM]
        try:
            rendered = _render(loop, variables)
        except Exception:
            return [_NO_ITEM]  # e.g. `X.results` of a registered stat: handled by `assert`
        return list(rendered) if isinstance(rendered, list) else [rendered]

    def path(self, value: Any, variables: dict[str, Any]) -> str | None:
        try:
            rendered = _render(value, variables)
        except Exception:
            return None
        text = str(rendered) if rendered is not None else ""
        return text if text.startswith("/") and "{{" not in text else None

    def step(
        self,
        module: str,
        args: dict[str, Any],
        task: dict[str, Any],
        variables: dict[str, Any],
        role: Path,
        label: str,
    ) -> None:
        host = self.host
        short = module.rsplit(".", 1)[-1]
        if short == "stat" and task.get("register"):
            found = self.path(args.get("path"), variables)
            host.registered.setdefault(str(task["register"]), [])
            if found:
                host.registered[str(task["register"])].append(found)
        elif short in ("assert", "fail"):
            text = str(args.get("that") if short == "assert" else task.get("when"))
            names = set(EXISTS.findall(text))
            if "item" in names:
                names.discard("item")
                names |= set(re.findall(r"(\w+)\.results", str(task.get("loop", ""))))
            for name in sorted(names):
                for found in host.registered.get(name, []):
                    self.require(found, label, "asserts")
        elif module in COMMAND:
            probe = task.get("failed_when") is False or bool(task.get("ignore_errors"))
            self.command(args, variables, label, probe or self.guarded(task))
        elif module in COPY:
            dest = self.path(args.get("dest"), variables)
            if dest:
                host.add(dest, label)
                self.config(dest, args, variables, role, label)
        elif short == "file":
            self.file(args, variables, label)
        elif module in DEST:
            found = self.path(args.get(DEST[module]), variables)
            if found:
                host.add(found, label)
        elif module in EDIT and args.get("create"):
            found = self.path(args.get("path") or args.get("dest"), variables)
            if found:
                host.add(found, label)
        elif module == "ansible.builtin.unarchive":
            found = self.path(args.get("creates"), variables)
            if found:
                host.add(found, label)
            self.unpack(args, variables, label)
        elif short == "apt":
            self.apt(args, variables, label)
        elif short == "modprobe":
            name = _render(args.get("name"), variables)
            host.add(self.table.module(str(name)), label)

    def unpack(self, args: dict[str, Any], variables: dict[str, Any], label: str) -> None:
        """An archive the table knows provides the folders it holds whole (paths.yaml)."""
        src = str(_render(args.get("src"), variables) or "")
        for archive in self.table.archives:
            if fnmatch.fnmatchcase(src, archive.src):
                self.fill(archive.trees, variables, label)

    def fill(self, trees: tuple[str, ...], variables: dict[str, Any], label: str) -> None:
        """Folders provided whole: every path below them counts as provided."""
        for tree in trees:
            folder = self.path(tree, variables)
            if folder:
                self.host.trees.setdefault(posixpath.normpath(folder), label)

    def guarded(self, task: dict[str, Any]) -> bool:
        """True when the task runs only where a stat found its path (`when: X.stat.exists`)."""
        when = (
            " ".join(map(str, task.get("when") or []))
            if isinstance(task.get("when"), list)
            else str(task.get("when") or "")
        )
        return any(not re.search(rf"not\s+{name}\.stat", when) for name in EXISTS.findall(when))

    def device(self, path: str) -> bool:
        """True when the kernel or a udev rule makes `path` at boot on this host."""
        local = self.facts["ansible_local"]["archform"]
        for device in self.table.devices:
            if not (fnmatch.fnmatchcase(path, device.path) or path.startswith(device.path + "/")):
                continue
            if device.after is not None and self.host.has(device.after) is not None:
                return True
            fabric_ok = self.host.kind == "compute" and self.gv.get("fabric_kind") in device.fabrics
            if fabric_ok and (not device.gpus or local["nvidia_gpus"] > 0):
                return True
        return False

    def require(self, path: str, label: str, verb: str) -> None:
        self.host.asserted += 1
        if self.host.has(path) is None and not self.device(path):
            self.host.problems.append(
                f"{label} {verb} {path} on {self.host.kind} nodes before anything provides it "
                f"(not shipped by image {self.image.id}, made by no earlier task)"
            )

    def command(
        self, args: dict[str, Any], variables: dict[str, Any], label: str, probe: bool
    ) -> None:
        try:
            argv = args.get("argv")
            line = (
                " ".join(map(str, _render(argv, variables)))
                if argv
                else str(_render(args.get("cmd") or "", variables))
            )
        except Exception:
            return
        removes = self.path(args.get("removes"), variables)
        if removes:
            self.require(removes, label, "runs only if there is")
        first = line.split()[0] if line.split() else ""
        if first.startswith("/") and not probe:
            self.require(first, label, "runs")
        creates = self.path(args.get("creates"), variables)
        if creates:
            before = self.host.has(creates, trees=False)
            if before is not None:
                self.host.problems.append(
                    f"{label} never runs: its creates: {creates} is already there ({before})"
                )
            self.host.add(creates, label)
        chdir = self.path(args.get("chdir"), variables)
        for program in self.table.programs:
            written = program.written_by(line, chdir)
            for path in written or []:
                self.host.add(path, f"{label} ({program.source})")
            self.fill(program.trees if written is not None else (), variables, label)

    def file(self, args: dict[str, Any], variables: dict[str, Any], label: str) -> None:
        state = str(_render(args.get("state") or "file", variables))
        target = self.path(args.get("path") or args.get("dest"), variables)
        if target is None:
            return
        if state == "absent":
            for path in [
                p for p in self.host.provided if p == target or p.startswith(target + "/")
            ]:
                del self.host.provided[path]
        elif state in ("directory", "touch", "link", "hard"):
            self.host.add(target, label)

    def apt(self, args: dict[str, Any], variables: dict[str, Any], label: str) -> None:
        try:
            names = _render(args.get("name") or [], variables)
            deb = _render(args.get("deb"), variables)
        except Exception:
            return
        packages = list(names) if isinstance(names, list) else [names]
        if deb:
            packages.append(unquote(str(deb).rsplit("/", 1)[-1]).split("_", 1)[0])
        for package in packages:
            name = str(package).split("=")[0]
            for path in self.table.packages.get(name, ()):
                self.host.add(path, f"{label} (package {package})")
            self.fill(self.table.package_trees.get(name, ()), variables, label)

    def config(
        self, dest: str, args: dict[str, Any], variables: dict[str, Any], role: Path, label: str
    ) -> None:
        if self.table.config_for(dest) is None:
            return
        try:
            if args.get("content") is not None:
                text = str(_render(args["content"], variables))
            else:
                source = role / "files" / str(_render(args.get("src"), variables))
                text = source.read_text("utf-8")
        except Exception:
            return
        self.host.configs.append((dest, text, label))

    def finish(self) -> None:
        """Every path the installed configurations name, on the hosts that read them."""
        host = self.host
        for dest, text, label in host.configs:
            spec = self.table.config_for(dest)
            assert spec is not None
            if spec.on is not None and host.kind not in spec.on:
                continue
            needs = _config_paths.needs(text, spec, dest)
            made = [n.path for n in needs if n.key and n.key.created_by and n.key.parents]
            for need in needs:
                key = need.key
                if key is not None and key.on is not None and host.kind not in key.on:
                    continue
                host.asserted += 1
                why = _config_paths.unprovided(need, made, host, self.device, self.image.id)
                if why:
                    host.problems.append(f"{dest} ({label}): {need.what} {need.path}: {why}")


_NO_ITEM = object()


def _vars(path: Path) -> dict[str, Any]:
    return dict(_load(path) or {}) if path.is_file() else {}


def check_project(ansible: Path, root: Path) -> Result:
    """Walk one Ansible project once per host kind."""
    label = f"{ansible.relative_to(root).as_posix()} (paths)"
    gv = _vars(ansible / "group_vars" / "all.yml")
    image = load_images().images.get(str(gv.get("archform_image")))
    if image is None:
        return Result(NAME, label, "failed", "group_vars/all.yml names no known archform_image")
    problems: list[str] = []
    counted = 0
    cache: dict[Path, Any] = {}
    for kind in KINDS:
        host = _Host(kind)
        walker = _Walker(ansible, gv, image, host, cache)
        for playbook in ("site.yml", "validate.yml"):
            if (ansible / playbook).is_file():
                walker.playbook(playbook)
            if playbook == "site.yml":
                walker.finish()
        problems += [p for p in host.problems if p not in problems]
        counted += host.asserted
    if problems:
        return Result(NAME, label, "failed", "; ".join(problems))
    return Result(
        NAME, label, "passed", f"{counted} asserted or configured paths provided on {image.id}"
    )


def applies(root: Path) -> bool:
    """Trees with a generated Ansible project that names its node image."""
    return any(root.rglob("ansible/group_vars/all.yml"))


def run(root: Path) -> list[Result]:
    """One result per Ansible project."""
    folders = sorted({p.parent.parent for p in root.rglob("ansible/group_vars/all.yml")})
    return [check_project(folder, root) for folder in folders if (folder / "site.yml").is_file()]


CHECK = Check(name=NAME, applies=applies, run=run)
