"""AWS ParallelCluster 3 configs read directly: findings at the config's own line, import.

Each file under parallelcluster/ is a ParallelCluster 3 cluster config written here, with
`# expect:` / `# must-not:` markers (harness.py): the set of (line, code) must match
exactly, so every finding not marked is a failure too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from archform.lint.engine import lint
from archform.lint.report import LintReport, render
from archform.spec import SpecError, load_paths, load_text
from archform.spec.discovery import is_blueprint_text
from archform.spec.peers import reader_for
from archform.spec.peers.emit import untouched
from spec.peers.harness import TODAY, assert_findings, round_trip
from support import ROOT, require_tool, run_cli

HERE = Path(__file__).parent / "parallelcluster"
FILES = sorted(HERE.glob("*.yaml"))


def test_at_least_eight_configs() -> None:
    assert len(FILES) >= 8


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_findings_at_the_configs_own_lines(path: Path) -> None:
    assert_findings(path)


def test_every_output_format_points_at_the_config(tmp_path: Path) -> None:
    path = HERE / "efa_defaults.yaml"
    result = lint(load_paths([path]), today=TODAY)
    report = LintReport(result, {str(path): path.read_text("utf-8").splitlines()})
    line = next(f.line for f in result.findings if f.rule == "NET004")
    assert line == 14
    sarif = json.loads(render("sarif", report))
    (run,) = sarif["runs"]
    hits = [r for r in run["results"] if r["ruleId"] == "NET004"]
    region = hits[0]["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"].endswith("efa_defaults.yaml")
    assert region["region"]["startLine"] == line
    assert hits[0]["partialFingerprints"]
    assert f"file={path},line={line}" in render("github", report)
    junit = render("junit", report)
    assert "NET004" in junit and f"{path}:{line}" in junit
    assert f"{path}:{line}:" in render("text", report)
    assert any(f["line"] == line for f in json.loads(render("json", report))["findings"])


def test_fingerprints_survive_a_moved_line() -> None:
    text = (HERE / "efa_defaults.yaml").read_text("utf-8")
    before = {f.fingerprint for f in lint(load_text(text, "cluster.yaml"), today=TODAY).findings}
    moved = "# a comment added at the top\n" + text
    after = lint(load_text(moved, "cluster.yaml"), today=TODAY).findings
    assert {f.fingerprint for f in after} == before
    assert min(f.line for f in after) > 1


def test_misspelt_key_is_the_schemas_own_error_at_its_line() -> None:
    text = (HERE / "spot_queue.yaml").read_text("utf-8").replace("MaxCount: 4", "MaxCont: 4")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "MaxCont" in t)
    with pytest.raises(SpecError) as caught:
        load_text(text, "cluster.yaml")
    (problem,) = caught.value.problems
    assert (problem.line, problem.column) == (line, 11)
    assert problem.render() == (
        f"cluster.yaml:{line}:11: error: Scheduling.SlurmQueues[0].ComputeResources[0].MaxCont: "
        "Unknown field. (hint: did you mean 'MaxCount'?)"
    )


def test_unknown_key_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "cluster.yaml"
    bad.write_text(
        "Region: us-east-1\nHeadNode:\n  InstanceType: m6i.xlarge\n  Colour: blue\n"
        "Scheduling:\n  Scheduler: slurm\n  SlurmQueues: []\n"
    )
    proc = run_cli(["lint", str(bad)])
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"{bad}:4:3: error: HeadNode.Colour: Unknown field. (hint: keys here: "
        "InstanceType, DisableSimultaneousMultithreading, Networking, Ssh, LocalStorage, "
        "SharedStorageType, Dcv, CustomActions, Iam, Imds, Image)"
    ]


def test_wrong_enum_and_missing_region() -> None:
    text = (HERE / "spot_queue.yaml").read_text("utf-8")
    with pytest.raises(SpecError) as caught:
        load_text(text.replace("CapacityType: SPOT", "CapacityType: SPOTTY"), "c.yaml")
    assert "Must be one of: ONDEMAND, SPOT, CAPACITY_BLOCK." in caught.value.problems[0].message
    with pytest.raises(SpecError) as caught:
        load_text(text.replace("Region: us-west-2\n", ""), "c.yaml")
    assert caught.value.problems[0].message.startswith("Region: not set in the file")


def test_detected_by_content_not_name(tmp_path: Path) -> None:
    text = (HERE / "cpu_only.yaml").read_text("utf-8")
    assert is_blueprint_text(text)
    assert not is_blueprint_text("jobs:\n  build:\n    runs-on: ubuntu-latest\n")
    assert reader_for(YAML(typ="safe").load(text)) is not None
    assert reader_for({"kind": "TrainingCluster", "HeadNode": {}}) is None
    folder = tmp_path / "infra"
    folder.mkdir()
    (folder / "whatever-name.yml").write_text(text)
    (folder / "ci.yaml").write_text("on: push\njobs: {}\n")
    proc = run_cli(["validate", str(folder)])
    assert proc.returncode == 0, proc.stderr
    found = folder / "whatever-name.yml"
    assert proc.stdout.strip() == (
        f"ok: {found}: TrainingCluster whatever-name "
        "(peer format: AWS ParallelCluster 3 cluster configuration)"
    )


def test_pre_commit_hook_passes_configs_by_type() -> None:
    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert all(h["types"] == ["yaml"] and "--force-exclude" in h["entry"] for h in hooks)
    # --force-exclude keeps only blueprints, by content: a ParallelCluster config is one
    assert is_blueprint_text((HERE / "multi_queue.yaml").read_text("utf-8"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_import_then_lint_gives_the_same_rule_codes(path: Path) -> None:
    source, imported, text = round_trip(path)
    assert imported == source
    assert untouched(text)
    assert not untouched(text.replace("nodes:", "nodes: 1 #", 1))


def test_import_names_origins_and_what_did_not_map() -> None:
    _, _, text = round_trip(HERE / "multi_queue.yaml")
    lines = text.splitlines()
    nodes = next(t for t in lines if t.strip().startswith("nodes: 8"))
    assert nodes.endswith(
        "# from multi_queue.yaml:34:11 Scheduling.SlurmQueues[0].ComputeResources[0].MaxCount"
    )
    assert "# Not mapped from multi_queue.yaml (linting it reports each as LNT003):" in lines
    assert any(
        t.startswith(
            "# - multi_queue.yaml:42:11 Scheduling.SlurmQueues[1].ComputeResources[0]"
            ".InstanceType [info]: a queue of other GPUs (L4 on g6.12xlarge)"
        )
        for t in lines
    )


def test_import_cli_refuses_to_replace_an_edited_file(tmp_path: Path) -> None:
    out = tmp_path / "blueprint.yaml"
    src = str(HERE / "capacity_block.yaml")
    assert run_cli(["import", src, "-o", str(out)]).returncode == 0
    first = out.read_text("utf-8")
    assert run_cli(["import", src, "-o", str(out)]).returncode == 0  # untouched: replaced
    out.write_text(first.replace("nodes: 8", "nodes: 6"))
    proc = run_cli(["import", src, "-o", str(out)])
    assert proc.returncode == 2 and "not an untouched archform import output" in proc.stderr
    assert "nodes: 6" in out.read_text("utf-8")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_diff_base_on_a_config_reports_only_what_the_pr_changed(tmp_path: Path) -> None:
    require_tool("git")
    repo = tmp_path / "repo"
    repo.mkdir()
    config = repo / "cluster.yaml"
    config.write_text((HERE / "efa_defaults.yaml").read_text("utf-8"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    # The PR: SSH restricted (fixes SEC001), the queue moved to Spot (adds TRN003).
    text = config.read_text().replace(
        "    SubnetId: subnet-0d0d0d0d0d0d0d0d0\n",
        "    SubnetId: subnet-0d0d0d0d0d0d0d0d0\n  Ssh:\n    AllowedIps: 10.0.0.0/8\n",
    )
    config.write_text(
        text.replace("    - Name: gpu\n", "    - Name: gpu\n      CapacityType: SPOT\n")
    )
    proc = run_cli(["lint", "cluster.yaml", "--diff-base", "main", "--format", "json"], cwd=repo)
    data = json.loads(proc.stdout)
    spot = config.read_text().splitlines().index("      CapacityType: SPOT") + 1
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("TRN003", spot)]
    assert [f["rule"] for f in data["fixed"]] == ["SEC001"]


def test_diagram_and_diff_read_configs(tmp_path: Path) -> None:
    diagram = run_cli(["diagram", str(HERE / "capacity_block.yaml")])
    assert diagram.returncode == 0, diagram.stderr
    assert "us-east-2" in diagram.stdout and "partitions: block" in diagram.stdout
    new = tmp_path / "capacity_block.yaml"
    text = (HERE / "capacity_block.yaml").read_text("utf-8")
    new.write_text(
        text.replace("MaxCount: 8", "MaxCount: 12").replace("MinCount: 8", "MinCount: 12")
    )
    diff = run_cli(["diff", str(HERE / "capacity_block.yaml"), str(new), "--no-lint"])
    assert diff.returncode == 0, diff.stderr
    assert "capacity-block  compute.nodes: 8 -> 12" in diff.stdout


def test_wrong_types_are_the_schemas_errors_never_defaults() -> None:
    text = (HERE / "spot_queue.yaml").read_text("utf-8")
    text = text.replace("MaxCount: 4", 'MaxCount: "4"').replace(
        "Enabled: true", "Enabled: yes-please"
    )
    with pytest.raises(SpecError) as caught:
        load_text(text, "c.yaml")
    lines = text.splitlines()
    got = [(p.line, p.message.rsplit(": ", 1)[1]) for p in caught.value.problems]
    assert got == [
        (i, message)
        for i, t in enumerate(lines, 1)
        for key, message in (
            ("Enabled: yes-please", "Not a valid boolean."),
            ('MaxCount: "4"', "Not a valid integer."),
        )
        if key in t
    ]


def test_validation_errors_name_the_config_key() -> None:
    text = (HERE / "multi_subnet_efa.yaml").read_text("utf-8")
    text = text.replace("Region: us-east-2", "Region: eu-central-1")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "p5e.48xlarge" in t)
    with pytest.raises(SpecError) as caught:
        load_text(text, "c.yaml")
    (problem,) = caught.value.problems
    assert (problem.line, problem.column) == (line, 25)
    assert problem.message.startswith(
        "Scheduling.SlurmQueues[0].ComputeResources[0].InstanceType (compute.instance_type): "
        "p5e.48xlarge is not offered in eu-central-1"
    )


def test_two_configs_with_the_same_file_name_lint_together(tmp_path: Path) -> None:
    for team in ("vision", "speech"):
        (tmp_path / team).mkdir()
        (tmp_path / team / "cluster.yaml").write_text((HERE / "spot_queue.yaml").read_text())
    result = lint(load_paths([tmp_path / "vision", tmp_path / "speech"]), today=TODAY)
    files = {f.file for f in result.findings if f.rule == "TRN003"}
    assert files == {str(tmp_path / t / "cluster.yaml") for t in ("vision", "speech")}
