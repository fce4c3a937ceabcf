"""A new user's first hour: clone, `pipx install .`, then init, generate, plan and verify.

Everything is real: a fresh clone of the commit under test, pipx (from PyPI, in a venv of
its own) with its own PIPX_HOME, archform and its extras from PyPI. The user follows the
hints archform prints: `plan` without the Pulumi SDK and `verify` without Ansible each name
a `pipx inject archform ...` command; the test runs exactly that command and the retry
passes. Nothing from this checkout's venv is on PATH or PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest

from distribution.venvs import clean_env, clone, ok, run, venv

PRESET = "aws-p5-efa-fsx"  # Pulumi (AWS) and Ansible (Slurm): plan and verify both have work


def _hint(text: str) -> list[str]:
    found = re.search(r"(pipx inject archform (?:'[^']*' ?)+)", text)
    assert found, text
    return shlex.split(found.group(1))


@pytest.mark.slow
@pytest.mark.system
def test_pipx_install_from_a_fresh_clone_generates_plans_and_verifies(tmp_path: Path) -> None:
    repo = clone(tmp_path / "clone")
    head = ok(run(["git", "-C", str(repo), "rev-parse", "HEAD"])).stdout.strip()
    tools = venv(tmp_path / "pipx-venv", "pipx")
    bin_dir = tmp_path / "bin"
    path = os.pathsep.join([str(bin_dir), str(tools.parent), "/usr/local/bin", "/usr/bin", "/bin"])
    env = clean_env(
        PATH=path,
        PIPX_HOME=str(tmp_path / "pipx-home"),
        PIPX_BIN_DIR=str(bin_dir),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    ok(run(["pipx", "install", str(repo)], env=env))
    archform = str(bin_dir / "archform")
    work = tmp_path / "work"
    work.mkdir()

    version = ok(run([archform, "--version"], cwd=work, env=env)).stdout.strip()
    # an untagged clone: setuptools-scm's X.Y.devN+gHASH, naming the commit
    assert re.fullmatch(r"archform \d+\.\d+(\.\d+)?\.dev\d+\+g[0-9a-f]{7,}(\.d\d+)?", version)
    assert head.startswith(version.split("+g")[1].split(".")[0]), (version, head)

    ok(run([archform, "init", "--preset", PRESET, "-o", "bp.yaml"], cwd=work, env=env))
    ok(run([archform, "lint", "bp.yaml"], cwd=work, env=env))
    ok(run([archform, "generate", "bp.yaml", "-o", "out"], cwd=work, env=env))

    # plan without the Pulumi SDK: exit 2 and the pipx command that adds it
    plan = run([archform, "plan", "bp.yaml"], cwd=work, env=env)
    assert plan.returncode == 2, plan.stderr
    inject = _hint(plan.stderr)
    assert any(r.startswith("pulumi-aws") for r in inject), inject
    ok(run(inject, cwd=work, env=env))
    plan = ok(run([archform, "plan", "bp.yaml"], cwd=work, env=env, timeout=600))
    assert "aws:ec2" in plan.stdout, plan.stdout[-2000:]

    # verify without Ansible: the substantive ansible check is skipped, so the run fails
    verify = [archform, "verify", "out", "--format", "json", "--jobs", "2"]
    first = run(verify, cwd=work, env=env, timeout=900)
    assert first.returncode == 1, first.stdout + first.stderr
    rows = json.loads(first.stdout)
    skipped = [r for r in rows if r["status"] == "skipped"]
    assert {r["check"] for r in skipped} == {"ansible"}, skipped
    ok(run(_hint(skipped[0]["detail"]), cwd=work, env=env))

    # the collections the playbooks use: the ones this run was given, else vendored from PyPI
    collections = os.environ.get("ARCHFORM_COLLECTIONS_PATH")
    if not collections:
        target = tmp_path / "collections" / "ansible_collections"
        script = str(repo / "scripts" / "vendor-collections.sh")
        ok(run(["sh", script, str(target)], env={**env, "PYTHON": str(tools)}))
        collections = str(target.parent)
    env["ARCHFORM_COLLECTIONS_PATH"] = collections

    second = run(verify, cwd=work, env=env, timeout=900)
    rows = json.loads(second.stdout)
    statuses = {(r["check"], r["status"]) for r in rows}
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert {s for _, s in statuses} == {"passed"}, statuses
    # a training tree: no policy pack (that is beside fleet and Platform programs)
    assert {"ansible", "packages", "paths", "slurm", "pulumi"} <= {c for c, _ in statuses}
