"""The published hook in a real repository: workflows, pre-commit config, Kubernetes, blueprints.

A scratch git repository holds what a real one does beside its blueprints: a GitHub
workflow, its own `.pre-commit-config.yaml` and Kubernetes manifests, plus every bundled
blueprint. The real `pre-commit` runs the hook on all of them:

- with the hook as published (.pre-commit-hooks.yaml: its entry, arguments and file
  types), run as a `repo: local` hook against this checkout, the run passes, the output
  shows the blueprints were linted ("No findings in N document(s)") and the other YAML
  skipped and counted;
- the negative control runs the same hook without `--force-exclude`, i.e. the old
  behaviour of linting every YAML file, and must fail on the workflow file (exit 2);
- `pre-commit try-repo` builds the hook's own virtualenv from this checkout with pip, as a
  user's pre-commit does, and runs it unchanged (needs PyPI).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from archform.spec import load_paths
from support import BLUEPRINTS, ROOT, missing, require_tool

pytestmark = [pytest.mark.integration]

WORKFLOW = """\
name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install . && archform lint blueprints
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""
NON_BLUEPRINTS = 3  # the workflow, .pre-commit-config.yaml, k8s/web.yaml


def _published(hook_id: str) -> dict[str, Any]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    return next(h for h in hooks if h["id"] == hook_id)


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PRE_COMMIT_HOME=str(home),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        NO_COLOR="1",
    )
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )


def _pre_commit() -> str:
    return shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")


def _local_hook(entry_args: list[str]) -> dict[str, Any]:
    """The published archform-lint hook as a `repo: local` hook running this checkout.

    Only `language` and the program differ: `system` with this interpreter's
    `-m archform` instead of a pip-built virtualenv; the id, arguments, file types and
    serial/filename settings are the published ones.
    """
    published = _published("archform-lint")
    hook = {k: v for k, v in published.items() if k not in ("language", "entry")}
    program = shlex.join([sys.executable, "-m", "archform", *entry_args])
    return {**hook, "entry": program, "language": "system", "verbose": True}


def _repository(tmp_path: Path, env: dict[str, str], hook: dict[str, Any] | None) -> Path:
    repo = tmp_path / "consumer"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW, "utf-8")
    (repo / "k8s").mkdir()
    (repo / "k8s" / "web.yaml").write_text(DEPLOYMENT, "utf-8")
    shutil.copytree(BLUEPRINTS, repo / "blueprints")
    config: dict[str, Any] = {"repos": []}
    if hook is not None:
        config["repos"].append({"repo": "local", "hooks": [hook]})
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), "utf-8")
    assert _run(["git", "init", "-q", "-b", "main"], repo, env).returncode == 0
    assert _run(["git", "add", "-A"], repo, env).returncode == 0
    return repo


def _bundled_documents() -> int:
    return len(load_paths(sorted(BLUEPRINTS.glob("*.yaml"))).documents)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    require_tool("git", "pre-commit")
    return tmp_path / "pre-commit-home"


def _checkout_env(home: Path) -> dict[str, str]:
    env = _env(home)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_published_hook_lints_the_blueprints_and_skips_other_yaml(
    home: Path, tmp_path: Path
) -> None:
    published = _published("archform-lint")
    assert published["language"] == "python"  # users get a virtualenv built by pre-commit
    program, *args = shlex.split(published["entry"])
    assert program == "archform"
    env = _checkout_env(home)
    repo = _repository(tmp_path, env, _local_hook(args))
    result = _run([_pre_commit(), "run", "--all-files"], repo, env)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "archform lint" in out and "Passed" in out
    assert f"No findings in {_bundled_documents()} document(s)" in out
    assert f"skipped {NON_BLUEPRINTS} non-blueprint YAML files" in out


def test_negative_control_linting_every_yaml_fails_on_the_workflow(
    home: Path, tmp_path: Path
) -> None:
    """The hook without --force-exclude, as published before: every YAML file is linted."""
    _, *args = shlex.split(_published("archform-lint")["entry"])
    old_args = [a for a in args if a != "--force-exclude"]
    assert old_args != args, "the published hook no longer passes --force-exclude"
    env = _checkout_env(home)
    repo = _repository(tmp_path, env, _local_hook(old_args))
    result = _run([_pre_commit(), "run", "--all-files"], repo, env)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "Failed" in out and "exit code: 2" in out
    assert ".github/workflows/ci.yml:1:1: error: missing required key 'kind'" in out
    assert "No findings in" not in out


@pytest.mark.slow
def test_try_repo_runs_the_published_hook_in_a_mixed_repository(home: Path, tmp_path: Path) -> None:
    """Needs PyPI: try-repo pip-installs this checkout into the hook's own virtualenv."""
    if not (ROOT / ".git").exists():
        missing(f"{ROOT} is not a git checkout (try-repo needs one)")
    env = _env(home)
    env.pop("PYTHONPATH", None)  # the hook must use its own venv, not this checkout's src
    repo = _repository(tmp_path, env, None)
    result = _run(
        [_pre_commit(), "try-repo", str(ROOT), "archform-lint", "--all-files", "--verbose"],
        repo,
        env,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert f"No findings in {_bundled_documents()} document(s)" in out
    assert f"skipped {NON_BLUEPRINTS} non-blueprint YAML files" in out
