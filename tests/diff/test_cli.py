"""`archform diff` end to end: formats, exit codes, --fail-on, documents added and removed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from archform.estimate.prices import load_prices
from diff.helpers import documents, dump
from support import BLUEPRINTS, run_cli

AWS = BLUEPRINTS / "aws-p5-efa-fsx.yaml"
ONPREM = BLUEPRINTS / "onprem-h100-ib-lustre.yaml"


def _edited(tmp: Path, name: str, stem: str, **compute: object) -> Path:
    docs = documents(stem)
    docs[0]["compute"].update(compute)
    path = tmp / name
    path.write_text(dump(docs), encoding="utf-8")
    return path


def test_text_output_groups_changes_by_impact(tmp_path: Path) -> None:
    new = _edited(tmp_path, "new.yaml", "aws-p5-efa-fsx", nodes=32, purchase="on_demand")
    result = run_cli(["diff", str(AWS), str(new)])
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("archform diff: 2 changes, highest impact: node replacement")
    assert out.index("NODE REPLACEMENT") < out.index("IN PLACE")
    assert "compute.nodes: 16 -> 32" in out
    assert "aws-p5-train gpu (us-east-1): nodes 16 -> 32 (+16), GPUs 128 -> 256 (+128)" in out


@pytest.mark.parametrize(
    ("threshold", "code"),
    [
        ("node-replacement", 1),
        ("data-loss-risk", 0),
        ("in-place", 1),
        ("rolling-restart", 1),
    ],
)
def test_fail_on_exits_1_at_or_above_the_class(tmp_path: Path, threshold: str, code: int) -> None:
    new = _edited(tmp_path, "new.yaml", "aws-p5-efa-fsx", instance_type="p4d.24xlarge")
    result = run_cli(["diff", str(AWS), str(new), "--fail-on", threshold])
    assert result.returncode == code, result.stderr


def test_fail_on_in_place_only_change_passes_a_rolling_gate(tmp_path: Path) -> None:
    new = _edited(tmp_path, "new.yaml", "aws-p5-efa-fsx", nodes=48)
    assert run_cli(["diff", str(AWS), str(new), "--fail-on", "rolling-restart"]).returncode == 0
    assert run_cli(["diff", str(AWS), str(new), "--fail-on", "in-place"]).returncode == 1


def test_bad_blueprint_and_bad_options_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(AWS.read_text("utf-8").replace("nodes: 16", "nodes: sixteen"), "utf-8")
    result = run_cli(["diff", str(AWS), str(bad)])
    assert result.returncode == 2
    assert "bad.yaml:" in result.stderr and "error:" in result.stderr
    assert "Traceback" not in result.stderr
    assert run_cli(["diff", str(AWS), str(AWS), "--fail-on", "doom"]).returncode == 2
    assert run_cli(["diff", str(AWS), str(AWS), "--format", "xml"]).returncode == 2
    assert run_cli(["diff", str(AWS)]).returncode == 2


def test_markdown_is_a_pr_comment_with_inert_user_text(tmp_path: Path) -> None:
    docs = documents("aws-p5-efa-fsx")
    docs[0]["description"] = "evil | <script>alert(1)</script> `code` @team [x](y)"
    docs[0]["compute"]["nodes"] = 20
    new = tmp_path / "new.yaml"
    new.write_text(dump(docs), "utf-8")
    result = run_cli(["diff", str(AWS), str(new), "--format", "md"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "### archform diff: highest impact **in place**"
    assert "| impact | document | path | old | new | why |" in lines
    rows = [ln for ln in lines if ln.startswith("| in place |")]
    assert len(rows) == 2
    for row in rows:
        assert row.count("|") == 7, row
    text = result.stdout
    assert "<script>" not in text and "@team" not in text and "`code`" not in text
    assert "&lt;script&gt;" in text
    assert "**Resources**" in text and "**Monthly cost**" in text


def test_json_has_changes_resources_and_cost_from_the_price_table(tmp_path: Path) -> None:
    new = _edited(tmp_path, "new.yaml", "aws-p5-efa-fsx", nodes=32)
    result = run_cli(["diff", str(AWS), str(new), "--format", "json"])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["highest"] == "in-place"
    (change,) = data["changes"]
    assert change == {
        "document": "aws-p5-train",
        "kind": "TrainingCluster",
        "path": "compute.nodes",
        "old": 16,
        "new": 32,
        "impact": "in-place",
        "reason": change["reason"],
        "policy": "compute.nodes",
    }
    (res,) = data["resources"]
    assert res["old"]["gpus_max"] == 128 and res["new"]["gpus_max"] == 256
    table = load_prices()
    price = table.get("p5.48xlarge", "us-east-1")
    assert price is not None and price.on_demand is not None
    (cost,) = data["costs"]["documents"]
    expected = 16 * price.on_demand * table.hours_per_month
    assert cost["delta_usd_per_month"] == pytest.approx(expected, abs=1)
    assert data["costs"]["prices_as_of"] == table.as_of.isoformat()


def test_onprem_cost_says_no_price(tmp_path: Path) -> None:
    new = _edited(tmp_path, "new.yaml", "onprem-h100-ib-lustre", nodes=48)
    result = run_cli(["diff", str(ONPREM), str(new)])
    assert "llm-pretrain: no price -> no price (no price for gpu: on-prem)" in result.stdout


def test_added_and_removed_documents(tmp_path: Path) -> None:
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    old_dir.mkdir()
    new_dir.mkdir()
    shutil.copy(AWS, old_dir)
    shutil.copy(BLUEPRINTS / "platform-two-tier.yaml", old_dir)
    shutil.copy(AWS, new_dir)
    shutil.copy(ONPREM, new_dir)
    result = run_cli(["diff", str(old_dir), str(new_dir), "--format", "json"])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    by = {(c["document"], c["path"]): c for c in data["changes"]}
    assert by[("llm-pretrain", "")]["impact"] == "in-place"
    assert by[("llm-pretrain", "")]["new"] == "TrainingCluster"
    assert by[("sivaro-train", "")]["impact"] == "cluster-wide-outage"
    assert by[("sivaro-train", "storage[checkpoints]")]["impact"] == "data-loss-risk"
    assert by[("sivaro-serve", "")]["impact"] == "cluster-wide-outage"
    assert by[("sivaro", "")]["impact"] == "data-loss-risk"
    assert ("aws-p5-train", "") not in by
    assert data["highest"] == "cluster-wide-outage"
    costs = {c["document"]: c for c in data["costs"]["documents"]}
    assert set(costs) == {"sivaro-train", "sivaro-serve", "llm-pretrain"}
    assert costs["llm-pretrain"]["delta_usd_per_month"] is None
    assert costs["llm-pretrain"]["missing_prices"] == ["gpu: on-prem"]
    assert costs["sivaro-train"]["new_usd_per_month"] is None
    assert costs["sivaro-train"]["delta_usd_per_month"] < 0


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.integration
def test_git_ref_compares_committed_version_with_working_tree(tmp_path: Path) -> None:
    from support import require_tool

    require_tool("git")
    repo = tmp_path / "repo"
    (repo / "blueprints").mkdir(parents=True)
    shutil.copy(AWS, repo / "blueprints" / "train.yaml")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "v1")
    text = (repo / "blueprints" / "train.yaml").read_text("utf-8")
    (repo / "blueprints" / "train.yaml").write_text(
        text.replace("capacity_tib: 48", "capacity_tib: 24"), "utf-8"
    )
    shutil.copy(ONPREM, repo / "blueprints" / "onprem.yaml")

    result = run_cli(["diff", "--git", "main", "blueprints", "--format", "json"], cwd=repo)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    paths = {(c["document"], c["path"]): c["impact"] for c in data["changes"]}
    assert paths == {
        ("aws-p5-train", "storage[datasets].capacity_tib"): "data-loss-risk",
        ("llm-pretrain", ""): "in-place",
    }
    # a single file works too, and from a subfolder
    one = run_cli(
        ["diff", "--git", "HEAD", "train.yaml", "--fail-on", "data-loss-risk"],
        cwd=repo / "blueprints",
    )
    assert one.returncode == 1, one.stderr
    assert "storage[datasets].capacity_tib: 48 -> 24" in one.stdout
    # a path that did not exist at the revision: everything in it is added
    (repo / "new").mkdir()
    shutil.copy(ONPREM, repo / "new" / "x.yaml")
    added = run_cli(["diff", "--git", "HEAD", "new", "--format", "json"], cwd=repo)
    assert json.loads(added.stdout)["changes"][0]["path"] == ""
    # a file deleted from the working tree: its documents are removed
    (repo / "blueprints" / "train.yaml").unlink()
    gone = run_cli(["diff", "--git", "HEAD", "blueprints/train.yaml", "-f", "json"], cwd=repo)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(gone.stdout)["highest"] == "cluster-wide-outage"
    # a bad revision is a usage error
    bad = run_cli(["diff", "--git", "no-such-ref", "blueprints"], cwd=repo)
    assert bad.returncode == 2 and "git" in bad.stderr and "Traceback" not in bad.stderr


def test_policy_flag_prints_the_table_and_default() -> None:
    from archform.diff.policy import RULES

    result = run_cli(["diff", "--policy"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(RULES) + 1
    fabric = next(ln for ln in lines if ln.split()[:2] == ["TrainingCluster", "fabric.kind"])
    assert "cluster-wide outage" in fabric
    assert "(any other field)" in lines[-1] and "node replacement" in lines[-1]
