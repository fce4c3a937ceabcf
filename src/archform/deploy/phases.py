"""The phase implementations: generate, pulumi (Automation API), ansible-runner playbooks."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.deploy import ready
from archform.deploy.plan import AnsibleProject, DeployPlan, PulumiProject
from archform.deploy.progress import PlaybookProgress, Reporter
from archform.galaxy_free import collections_path as shared_collections_path
from archform.render.generate import generate
from archform.render.writer import EditedFilesError, NotGeneratedDirError
from archform.spec import BlueprintSet, Document, UsageError

# How many runner folders (artifacts of past playbook runs) to keep per playbook.
KEEP_RUNS = 3
COLLECTIONS = ("ansible/posix", "community/general")


class PhaseError(Exception):
    """A phase did not succeed (the message says what failed)."""


@dataclass(frozen=True, slots=True)
class Context:
    """What every phase gets."""

    plan: DeployPlan
    blueprints: BlueprintSet
    docs: list[Document]
    reporter: Reporter


def run_generate(ctx: Context) -> None:
    """Write the generated tree (unchanged files are reported as such)."""
    try:
        report = generate(ctx.blueprints, ctx.plan.out_dir, docs=ctx.docs)
    except EditedFilesError as exc:
        hint = "keep your edits in the blueprint, or regenerate with --force"
        raise UsageError(str(exc), hint) from None
    except NotGeneratedDirError as exc:
        raise UsageError(str(exc), "deploy into a new folder (-o DIR)") from None
    ctx.reporter.say(
        f"  {len(report.written)} written, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} removed"
    )


# `pulumi up` of one project with stack config that this run sets (e.g. serve=false);
# returns the stack's (non-secret) outputs. The real one is `pulumi_up` (Automation API).
UpFn = Callable[["Context", PulumiProject, dict[str, str]], dict[str, Any]]


def run_pulumi(ctx: Context, up: UpFn | None = None) -> None:
    """`pulumi up` per project, in plan order; stack outputs feed the Ansible inventory.

    A fleet fed by a Platform registry comes up without serving objects while the registry
    holds no release of it (deploy.serve).
    """
    from archform.deploy.serve import serve_config

    for project in ctx.plan.pulumi:
        config = serve_config(ctx, project, ctx.reporter.say)
        pulumi_project(ctx, project, config, up or pulumi_up)


def run_serve(ctx: Context, up: UpFn | None = None) -> None:
    """The serve phase (deploy.serve.run_serve) with the real or a given `pulumi up`."""
    from archform.deploy.serve import run_serve as serve

    def each(c: Context, project: PulumiProject, config: dict[str, str]) -> dict[str, Any]:
        pulumi_project(c, project, config, up or pulumi_up)
        return {}

    serve(ctx, each)


def pulumi_project(
    ctx: Context, project: PulumiProject, config: dict[str, str], up: UpFn
) -> dict[str, Any]:
    """Up one project and save its outputs (state folder; Ansible's file for training)."""
    say = ctx.reporter.say
    say(f"  {project.role} ({project.document}): pulumi up {project.path}, stack {ctx.plan.stack}")
    outputs = up(ctx, project, config)
    saved = ctx.plan.state_dir / "outputs" / f"{project.document}-{project.role}.json"
    _write_json(saved, outputs)
    if project.outputs_file is not None:
        _write_json(ctx.plan.out_dir / project.outputs_file, outputs)
        say(f"    outputs -> {project.outputs_file}")
    return outputs


def pulumi_up(ctx: Context, project: PulumiProject, config: dict[str, str]) -> dict[str, Any]:
    """The Automation API `pulumi up` (the Pulumi CLI runs it)."""
    from pulumi import automation as auto

    try:
        return _pulumi_up(ctx, project, auto, config)
    except auto.errors.CommandError as exc:
        raise PhaseError(f"pulumi failed for {project.path}: {str(exc)[-2000:]}") from None


def _pulumi_up(
    ctx: Context, project: PulumiProject, auto: Any, config: dict[str, str]
) -> dict[str, Any]:
    """Select (or create) the stack, install the project's dependencies, up; the outputs."""
    log = ctx.reporter.log
    work_dir = ctx.plan.out_dir / project.path
    stack = auto.create_or_select_stack(stack_name=ctx.plan.stack, work_dir=str(work_dir))
    existing = stack.get_all_config()
    for key, value in project.defaults:
        if key not in existing:
            stack.set_config(key, auto.ConfigValue(value=value))
            ctx.reporter.say(f"    config {key}={value}")
    for key, value in config.items():
        stack.set_config(key, auto.ConfigValue(value=value))
        ctx.reporter.say(f"    config {key}={value}")
    stack.workspace.install(on_output=lambda line: log(f"pulumi install: {line.rstrip()}"))
    result = stack.up(on_output=lambda line: log(f"pulumi: {line.rstrip()}"), color="never")
    changes = dict(result.summary.resource_changes or {})
    ctx.reporter.say(
        f"    {project.path}: " + ", ".join(f"{k}={v}" for k, v in sorted(changes.items()))
    )
    return {k: v.value for k, v in stack.outputs().items() if not v.secret}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def ansible_bin_dir() -> str:
    """The folder of the ansible-playbook that goes with this Python (a venv's bin)."""
    return str(Path(sys.executable).parent)


def ansible_playbook() -> str | None:
    """Path of ansible-playbook (PATH, or beside this Python), or None."""
    path = os.environ.get("PATH", "") + os.pathsep + ansible_bin_dir()
    return shutil.which("ansible-playbook", path=path)


def collections_path(out_dir: Path) -> str | None:
    """A collections path holding the collections the playbooks use, or None."""
    return shared_collections_path([out_dir])


def leftover_playbooks(project_dir: Path) -> list[int]:
    """PIDs of ansible-playbook processes still working in `project_dir`.

    ansible-runner starts ansible-playbook in its own session with SIGHUP ignored, so a
    deploy that is killed leaves it running; it is recognised by its working folder.
    """
    found: list[int] = []
    target = str(project_dir.resolve())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = str((proc / "cwd").readlink())
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if cwd.removesuffix(" (deleted)") == target and b"ansible-playbook" in cmdline:
            found.append(int(proc.name))
    return sorted(found)


def wait_for_leftovers(ctx: Context, project_dir: Path, timeout: float = 3600) -> None:
    """Let a playbook left by an interrupted deploy finish before starting another."""
    pids = leftover_playbooks(project_dir)
    if not pids:
        return
    ctx.reporter.say(
        f"  waiting for ansible-playbook (pid {', '.join(map(str, pids))}) left running by "
        "an interrupted deploy to finish"
    )
    deadline = time.monotonic() + timeout
    while pids:
        if time.monotonic() > deadline:
            raise PhaseError(
                f"ansible-playbook (pid {', '.join(map(str, pids))}) is still running in "
                f"{project_dir}; stop it (kill PID) and resume"
            )
        time.sleep(1)
        pids = leftover_playbooks(project_dir)


def run_playbook(ctx: Context, project: AnsibleProject, playbook: str) -> int:
    """Run one playbook of the project with ansible-runner; the number of changed tasks."""
    import ansible_runner

    project_dir = ctx.plan.out_dir / project.path
    wait_for_leftovers(ctx, project_dir)
    runs = ctx.plan.state_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    stem = f"{project.document}-{Path(playbook).stem}"
    # A fresh private_data_dir per run: ansible-runner persists options in it.
    private = runs / f"{stem}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    private.mkdir()
    _prune(runs, stem)
    env = _runner_env(ctx, project_dir)
    hosts = ", ".join(project.hosts)
    ctx.reporter.say(f"  {project.path}/{playbook} on {hosts}")
    ctx.reporter.log(f"runner folder: {private}")
    with PlaybookProgress(ctx.reporter) as progress:
        result = ansible_runner.run(
            private_data_dir=str(private),
            project_dir=str(project_dir),
            playbook=playbook,
            inventory=str(project_dir / project.inventory),
            envvars=env,
            event_handler=progress,
            quiet=True,
        )
    if result.status != "successful" or result.rc != 0:
        tail = _tail(private)
        raise PhaseError(
            f"{project.path}/{playbook}: {result.status} (rc {result.rc}); "
            f"runner output in {private}" + (f"\n{tail}" if tail else "")
        )
    return progress.changed()


def _runner_env(ctx: Context, project_dir: Path) -> dict[str, str]:
    env = {
        "PATH": ansible_bin_dir() + os.pathsep + os.environ.get("PATH", ""),
        "ANSIBLE_CONFIG": str(project_dir / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }
    collections = collections_path(ctx.plan.out_dir)
    if collections is not None:
        env["ANSIBLE_COLLECTIONS_PATH"] = collections
    return env


def check_slurm_nodes(ctx: Context, project: AnsibleProject) -> None:
    """Check that every Slurm node is up (slurmd answers, the controller lists it usable).

    Otherwise the error names each node that is not and why (archform.deploy.ready).
    """
    project_dir = ctx.plan.out_dir / project.path
    runs = ctx.plan.state_dir / "runs"
    stem = f"{project.document}-ready"
    private = runs / f"{stem}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    private.mkdir(parents=True)
    _prune(runs, stem)
    ctx.reporter.say(f"  Slurm nodes of {project.document}: slurmd on every compute host, sinfo")
    try:
        count = ready.wait_until_ready(private, project_dir, project, _runner_env(ctx, project_dir))
    except RuntimeError as exc:
        raise PhaseError(str(exc)) from None
    ctx.reporter.say(f"    all {count} Slurm nodes up")


def _tail(private: Path, lines: int = 15) -> str:
    stdout = private / "artifacts"
    found = sorted(stdout.glob("*/stdout"))
    if not found:
        return ""
    text = found[-1].read_text("utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:])


def _prune(runs: Path, stem: str) -> None:
    old = sorted(p for p in runs.iterdir() if p.name.startswith(f"{stem}-"))
    for path in old[:-KEEP_RUNS]:
        shutil.rmtree(path, ignore_errors=True)
