"""Issue 24: PR mode and `diff --git` read any file name git can hold, given absolute or relative.

git quotes non-ASCII names (core.quotePath) unless asked for `-z`: `lint --diff-base` then
found no base file and reported unchanged findings as new, and `diff --git` read a one-node
change as a new cluster. An absolute path listed nothing at the base either.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support import require_tool, run_cli

BASE = """\
version: 1
kind: TrainingCluster
name: train
placement:
  provider: aws
  region: us-east-1
  zones: [us-east-1a]
compute:
  nodes: 4
  instance_type: p5.48xlarge
storage:
  - {name: ckpt, kind: lustre, purpose: checkpoints, capacity_tib: 24, mount: /fsx/ckpt}
scheduler:
  health_checks: []
"""
NAMES = ["café clusters/trâin.yaml", "plain/train.yaml", 'odd "quote"/tab\tname.yaml']


def _repo(tmp_path: Path, name: str) -> tuple[Path, Path]:
    require_tool("git")
    repo = tmp_path / "repo"
    bp = repo / name
    bp.parent.mkdir(parents=True)
    bp.write_text(BASE)
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=repo,
            check=True,
            capture_output=True,
        )
    bp.write_text(BASE.replace("nodes: 4", "nodes: 5"))  # the PR: one more node
    return repo, bp


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
def test_diff_base_finds_the_base_file(tmp_path: Path, name: str, absolute: bool) -> None:
    repo, bp = _repo(tmp_path, name)
    arg = str(bp) if absolute else name
    proc = run_cli(["lint", arg, "--diff-base", "main", "--format", "json"], cwd=repo)
    assert proc.returncode == 0, proc.stderr  # SCH003 was there at main: not new
    data = json.loads(proc.stdout)
    assert data["findings"] == [] and data["fixed"] == []


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
def test_diff_git_reads_a_one_node_change_as_a_resize(
    tmp_path: Path, name: str, absolute: bool
) -> None:
    repo, bp = _repo(tmp_path, name)
    arg = str(bp) if absolute else name
    proc = run_cli(["diff", "--git", "main", arg, "--format", "json"], cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    assert data["highest"] == "in-place"
    assert [(c["document"], c["path"], c["old"], c["new"]) for c in data["changes"]] == [
        ("train", "compute.nodes", 4, 5)
    ]
