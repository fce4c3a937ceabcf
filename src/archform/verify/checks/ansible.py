"""Ansible: inventory parse, `ansible-playbook --syntax-check` and strict `ansible-lint`.

ansible-lint runs offline with the production profile and a config that turns warnings
into failures (``warn_list: []``) and enables the experimental ``args`` rule, which checks
module arguments against each module's argument spec (measured here with ansible-lint 26.x,
no public source found: the production profile alone does not report it).
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import replace
from pathlib import Path

from archform.galaxy_free import collections_path as shared_collections_path
from archform.install import collections_hint, extra_hint
from archform.verify import Check, Result, Status, missing_tools
from archform.verify.cache import cached
from archform.verify.checks._projects import (
    Project,
    find_projects,
    run,
    synthetic_outputs,
    tail,
    tool_env,
)

NAME = "ansible"
LINT_CONFIG = "profile: production\noffline: true\nwarn_list: []\nenable_list: [args]\n"


def collections_path() -> str | None:
    """A collections path holding ansible.posix and community.general, or None."""
    return shared_collections_path()


def applies(root: Path) -> bool:
    """Trees with at least one ansible/site.yml."""
    return any(root.rglob("ansible/site.yml"))


def _inventory(
    project: Project, env: dict[str, str], scratch: Path
) -> tuple[Result, dict[str, str]]:
    """Parse the inventory with ansible-inventory; cloud trees get synthetic Pulumi outputs."""
    artifact = f"{project.label}/inventory"
    env = dict(env)
    script = project.ansible / "inventory" / "archform_inventory.py"
    if script.is_file():
        if project.cluster is None:
            why = "no resolved-blueprint.yaml to fake Pulumi outputs (hint: regenerate the tree)"
            return Result(NAME, artifact, "skipped", why), env
        from archform.render.public import training_view

        outputs = scratch / "pulumi-outputs.json"
        outputs.write_text(json.dumps(synthetic_outputs(training_view(project.cluster))))
        env["ARCHFORM_PULUMI_OUTPUTS"] = str(outputs)
    proc = run(["ansible-inventory", "--list"], cwd=project.ansible, env=env, timeout=120)
    if proc.returncode != 0:
        return Result(NAME, artifact, "failed", tail(proc.stderr or proc.stdout)), env
    data = json.loads(proc.stdout)
    hosts = {group: len(_group_hosts(data, group)) for group in ("controller", "login", "compute")}
    detail = ", ".join(f"{g}={n}" for g, n in hosts.items())
    if project.cluster is not None:
        expected = project.cluster.compute.total_nodes
        if hosts["compute"] != expected or hosts["controller"] != 1:
            detail += f"; blueprint has {expected} compute"
            return Result(NAME, artifact, "failed", detail), env
    return Result(NAME, artifact, "passed", detail), env


def _group_hosts(data: dict[str, object], group: str) -> set[str]:
    entry = data.get(group)
    if not isinstance(entry, dict):
        return set()
    found = set(entry.get("hosts") or [])
    for child in entry.get("children") or []:
        found |= _group_hosts(data, str(child))
    return found


def check_project(project: Project, collections: str) -> list[Result]:
    """Inventory, syntax-check of site.yml and validate.yml, then ansible-lint."""
    env = tool_env(
        {
            "ANSIBLE_COLLECTIONS_PATH": collections,
            "ANSIBLE_NOCOLOR": "1",
            "NO_COLOR": "1",
            "ANSIBLE_LINT_SKIP_SCHEMA_UPDATE": "1",
        }
    )
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="archform-ansible-") as tmp:
        scratch = Path(tmp)
        inventory, env = _inventory(project, env, scratch)
        results.append(inventory)
        for playbook in ("site.yml", "validate.yml"):
            proc = run(
                ["ansible-playbook", "--syntax-check", playbook],
                cwd=project.ansible,
                env=env,
                timeout=180,
            )
            status: Status = "passed" if proc.returncode == 0 else "failed"
            detail = "" if status == "passed" else tail(proc.stderr + proc.stdout)
            artifact = f"{project.label}/{playbook} (syntax-check)"
            results.append(Result(NAME, artifact, status, detail))
        config = scratch / "ansible-lint.yml"
        config.write_text(LINT_CONFIG)
        # --project-dir: without it ansible-lint takes the config file's folder as the
        # project and lints only what is named. No file arguments: the whole project
        # (playbooks, roles, group_vars, inventory, requirements.yml) is linted.
        proc = run(
            [
                "ansible-lint",
                "-c",
                str(config),
                "--project-dir",
                str(project.ansible),
                "--strict",
                "--nocolor",
                "-f",
                "pep8",
            ],
            cwd=project.ansible,
            env=env,
            timeout=600,
        )
        violations = [line for line in proc.stdout.splitlines() if line.strip()]
        match = re.search(r"in (\d+) files processed", proc.stderr)
        processed = int(match.group(1)) if match else 0
        expected = len(list(project.ansible.rglob("*.yml")))
        if proc.returncode == 0 and processed < expected:
            results.append(
                Result(
                    NAME,
                    f"{project.label} (ansible-lint production)",
                    "failed",
                    f"linted only {processed} of {expected} YAML files",
                )
            )
        elif proc.returncode == 0:
            results.append(
                Result(
                    NAME,
                    f"{project.label} (ansible-lint production)",
                    "passed",
                    f"0 violations in {processed} files",
                )
            )
        else:
            detail = f"rc {proc.returncode}, {len(violations)} violation(s): " + tail(
                proc.stdout + proc.stderr, 8
            )
            results.append(
                Result(NAME, f"{project.label} (ansible-lint production)", "failed", detail)
            )
    return results


def run_check(root: Path) -> list[Result]:
    """Check every Ansible project in the tree."""
    projects = find_projects(root)
    missing = missing_tools("ansible-playbook", "ansible-lint", "ansible-inventory")
    collections = collections_path()
    results: list[Result] = []
    for project in projects:
        if missing:
            detail = f"missing {', '.join(missing)} (hint: {extra_hint('ansible')})"
            results.append(Result(NAME, project.label, "skipped", detail))
            continue
        if collections is None:
            results.append(
                Result(
                    NAME,
                    project.label,
                    "skipped",
                    "collections ansible.posix and community.general not found "
                    f"(hint: {collections_hint()})",
                )
            )
            continue
        results.extend(_reused(project, collections))
    return results


PROJECT = "{project}"


def _reused(project: Project, collections: str) -> list[Result]:
    """check_project, reused for an identical project (this tree or another) checked before.

    Stored with the project's label replaced by a placeholder, so the same roles in another
    tree (or under another document name) are checked once.
    """
    label = project.label

    def compute() -> list[Result]:
        found = check_project(project, collections)
        return [replace(r, artifact=r.artifact.replace(label, PROJECT, 1)) for r in found]

    cluster = project.cluster.model_dump_json() if project.cluster is not None else ""
    extra = [f"cluster={cluster}", f"collections={collections}"]
    stored, _ = cached("ansible-project", project.ansible, CHECK_TOOLS, compute, extra)
    return [replace(r, artifact=r.artifact.replace(PROJECT, label, 1)) for r in stored]


CHECK_TOOLS = ("ansible-playbook", "ansible-lint", "ansible-inventory")


CHECK = Check(
    name=NAME,
    applies=applies,
    run=run_check,
    tools=CHECK_TOOLS,
)
