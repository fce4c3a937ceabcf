"""`--diff-base REF` in a temporary git repository: only what the change made worse."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

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


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_pr_adding_a_cross_region_zone_reports_only_trn001_trn002(tmp_path: Path) -> None:
    require_tool("git")
    repo = tmp_path / "repo"
    (repo / "blueprints").mkdir(parents=True)
    bp = repo / "blueprints" / "train.yaml"
    bp.write_text(BASE)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    # The PR: a second region and a zone in it, plus unrelated line moves above.
    bp.write_text(
        "# moved down by a comment\n\n"
        + BASE.replace(
            "  region: us-east-1\n  zones: [us-east-1a]\n",
            "  regions: [us-east-1, us-west-2]\n  zones: [us-east-1a, us-west-2a]\n",
        )
    )
    full = run_cli(["lint", "blueprints", "--format", "json"], cwd=repo)
    before = {f["rule"] for f in json.loads(full.stdout)["findings"]}
    assert {"SCH003", "TRN001", "TRN002"} <= before  # SCH003 was already there at main
    proc = run_cli(["lint", "blueprints", "--diff-base", "main", "--format", "json"], cwd=repo)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert sorted(f["rule"] for f in data["findings"]) == ["TRN001", "TRN002"]
    assert data["fixed"] == [] and data["diff_base"] == "main"
    text = run_cli(["lint", "blueprints", "--diff-base", "main"], cwd=repo).stdout
    assert "new since main" in text
    sarif = json.loads(
        run_cli(["lint", "blueprints", "--diff-base", "main", "--format", "sarif"], cwd=repo).stdout
    )
    assert {r["baselineState"] for r in sarif["runs"][0]["results"]} == {"new"}

    # Fixing the health checks in the same PR lists SCH003 as fixed.
    bp.write_text(bp.read_text().replace("health_checks: []", "health_checks: [nhc]"))
    data = json.loads(
        run_cli(["lint", "blueprints", "--diff-base", "main", "--format", "json"], cwd=repo).stdout
    )
    assert [f["rule"] for f in data["fixed"]] == ["SCH003"]
    assert data["fixed"][0]["file"] == "blueprints/train.yaml"


def test_new_file_is_all_new_and_bad_ref_is_usage_error(tmp_path: Path) -> None:
    require_tool("git")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README").write_text("x\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "bp.yaml").write_text(BASE)
    proc = run_cli(["lint", "bp.yaml", "--diff-base", "main", "--format", "json"], cwd=repo)
    assert sorted(f["rule"] for f in json.loads(proc.stdout)["findings"]) == ["SCH003"]
    bad = run_cli(["lint", "bp.yaml", "--diff-base", "no-such-ref"], cwd=repo)
    assert bad.returncode == 2 and "not a git revision" in bad.stderr


def test_base_that_does_not_load_counts_everything_as_new(tmp_path: Path) -> None:
    require_tool("git")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "bp.yaml").write_text("version: 1\nkind: TrainingCluster\nname: x\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "broken base")
    (repo / "bp.yaml").write_text(BASE)
    proc = run_cli(["lint", "bp.yaml", "--diff-base", "main", "--format", "json"], cwd=repo)
    assert sorted(f["rule"] for f in json.loads(proc.stdout)["findings"]) == ["SCH003"]
    assert "every finding counts as new" in proc.stderr
