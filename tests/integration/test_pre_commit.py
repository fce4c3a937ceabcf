"""The published pre-commit hooks, run by the real `pre-commit try-repo`.

try-repo clones this repository (its HEAD plus any uncommitted changes, as a shadow
commit), builds the hook's virtualenv with pip from PyPI exactly as a user's pre-commit
would, and runs `archform-lint` on the files staged in a scratch git repository: a
blueprint with a finding fails the commit, a clean bundled blueprint passes. A second test
installs the hook with a .pre-commit-config.yaml pinned to this repository's HEAD commit
and runs a real `git commit`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import BLUEPRINTS, ROOT, missing, require_tool

pytestmark = [pytest.mark.integration, pytest.mark.slow]
BAD = ROOT / "tests" / "rules" / "fixtures" / "TRN001" / "fail_doc_example.yaml"
CLEAN = BLUEPRINTS / "aws-p5-efa-fsx.yaml"


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the module, so the hook venv is built once per test."""
    require_tool("git", "pre-commit")
    if not (ROOT / ".git").exists():
        missing(f"{ROOT} is not a git checkout (try-repo needs one)")
    return tmp_path_factory.mktemp("pre-commit-home")


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the hook must use its own venv, not this checkout's src
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


def _scratch_repo(tmp_path: Path, env: dict[str, str]) -> Path:
    repo = tmp_path / "consumer"
    repo.mkdir()
    assert _run(["git", "init", "-q", "-b", "main"], repo, env).returncode == 0
    (repo / "blueprints").mkdir()
    return repo


def _pre_commit() -> str:
    found = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    return found


def test_try_repo_fails_on_a_finding_and_passes_a_clean_blueprint(
    pre_commit_home: Path, tmp_path: Path
) -> None:
    env = _env(pre_commit_home)
    repo = _scratch_repo(tmp_path, env)
    shutil.copy(BAD, repo / "blueprints" / "cluster.yaml")
    _run(["git", "add", "blueprints/cluster.yaml"], repo, env)
    bad = _run([_pre_commit(), "try-repo", str(ROOT), "archform-lint"], repo, env)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "archform lint" in bad.stdout and "Failed" in bad.stdout
    assert "blueprints/cluster.yaml:6:3: TRN001 [error]" in bad.stdout

    _run(["git", "rm", "-q", "--cached", "blueprints/cluster.yaml"], repo, env)
    (repo / "blueprints" / "cluster.yaml").unlink()
    shutil.copy(CLEAN, repo / "blueprints" / "aws.yaml")
    _run(["git", "add", "blueprints/aws.yaml"], repo, env)
    good = _run([_pre_commit(), "try-repo", str(ROOT), "archform-lint"], repo, env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "archform lint" in good.stdout and "Passed" in good.stdout


def test_installed_hook_blocks_a_commit_with_findings(
    pre_commit_home: Path, tmp_path: Path
) -> None:
    env = _env(pre_commit_home)
    head = _run(["git", "rev-parse", "HEAD"], ROOT, env).stdout.strip()
    hooks = _run(["git", "show", f"{head}:.pre-commit-hooks.yaml"], ROOT, env)
    assert hooks.returncode == 0, f"HEAD has no .pre-commit-hooks.yaml: {hooks.stderr}"
    repo = _scratch_repo(tmp_path, env)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n"
        "      - id: archform-lint\n        files: ^blueprints/\n",
        "utf-8",
    )
    assert _run([_pre_commit(), "install"], repo, env).returncode == 0
    shutil.copy(BAD, repo / "blueprints" / "cluster.yaml")
    _run(["git", "add", "-A"], repo, env)
    blocked = _run(["git", "commit", "-q", "-m", "bad"], repo, env)
    assert blocked.returncode != 0, blocked.stdout
    assert "TRN001" in blocked.stdout + blocked.stderr
    assert _run(["git", "rev-parse", "--verify", "HEAD"], repo, env).returncode != 0

    shutil.copy(CLEAN, repo / "blueprints" / "cluster.yaml")
    _run(["git", "add", "-A"], repo, env)
    done = _run(["git", "commit", "-q", "-m", "good"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
