"""Extension points: a blueprint-declared folder of the team's own Ansible tasks (included by
site.yml at the base, compute and site hooks) and a Pulumi package the generated program
imports and calls; regeneration keeps both (issue 21 item 8)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from archform.render.generate import build_files
from archform.spec import SpecError, load_paths
from support import programs, run_cli

BLUEPRINT = """\
version: 1
kind: TrainingCluster
name: ext
placement: {provider: aws, region: us-east-1, zones: [us-east-1a]}
compute: {nodes: 2, instance_type: p5.48xlarge}
extensions:
  ansible: ops/ansible
  pulumi: ops/pulumi
"""
TASK = "---\n- name: Install htop\n  ansible.builtin.apt:\n    name: [htop]\n    state: present\n"
TEAM_PY = '''\
"""The team's Pulumi code: one SSM parameter naming how many compute nodes were built."""

import pulumi_aws as aws


def extend(**built):
    aws.ssm.Parameter(
        "team-node-count",
        type="String",
        value="team",
        description=str(len(built["nodes"].compute)),
    )
'''


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for hook, name in (("base", "00-users.yml"), ("compute", "10-htop.yml"), ("site", "z.yml")):
        (root / "ops" / "ansible" / hook).mkdir(parents=True)
        (root / "ops" / "ansible" / hook / name).write_text(TASK)
    (root / "ops" / "pulumi").mkdir()
    (root / "ops" / "pulumi" / "__init__.py").write_text(TEAM_PY)
    (root / "cluster.yaml").write_text(BLUEPRINT)
    return root


def _digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


def test_site_yml_includes_team_tasks_at_each_hook(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    out = tmp_path / "out"
    assert run_cli(["generate", str(repo / "cluster.yaml"), "-o", str(out)]).returncode == 0
    plays = YAML(typ="safe").load((out / "ansible/site.yml").read_text())
    names = [p["name"] for p in plays]
    included = {
        p["name"]: [t["ansible.builtin.include_tasks"] for t in p["tasks"]]
        for p in plays
        if "hook" in p["name"]
    }
    base = next(n for n in names if "base hook" in n)
    compute = next(n for n in names if "compute hook" in n)
    site = next(n for n in names if "site hook" in n)
    assert included[base] == ["extensions/base/00-users.yml"]
    assert included[compute] == ["extensions/compute/10-htop.yml"]
    assert included[site] == ["extensions/site/z.yml"]
    # Hooks sit where documented: base after MUNGE, compute after the GPU stack, site last.
    assert names.index(base) == names.index("Base settings and MUNGE on every host") + 1
    assert names[-1] == site
    assert (
        names.index(compute) == names.index("GPU, fabric and container stack on compute nodes") + 1
    )
    for rel in included[base] + included[compute] + included[site]:
        assert (out / "ansible" / rel).read_text() == TASK


def test_pulumi_program_calls_the_team_package(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    loaded = load_paths([repo / "cluster.yaml"])
    out = tmp_path / "tree"
    for f in build_files(loaded):
        (out / f.path).parent.mkdir(parents=True, exist_ok=True)
        (out / f.path).write_bytes(f.content)
    main = (out / "pulumi/__main__.py").read_text()
    assert main.rstrip().endswith("extensions.extend(net=net, fs=fs, nodes=nodes)")
    assert "EXTENSIONS = True" in (out / "pulumi/settings.py").read_text().splitlines()
    assert (out / "pulumi/extensions/__init__.py").read_text() == TEAM_PY
    run = programs.run(out / "pulumi")
    (param,) = run.of_type("aws:ssm/parameter:Parameter")
    assert param.name == "team-node-count" and param.inputs["description"] == "2"


def test_regeneration_keeps_the_team_code_and_protects_edited_copies(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    out = tmp_path / "out"
    args = ["generate", str(repo / "cluster.yaml"), "-o", str(out)]
    before = _digest(repo / "ops")
    assert run_cli(args).returncode == 0
    # The team changes its own task file: the next run carries the change over.
    (repo / "ops/ansible/compute/10-htop.yml").write_text(TASK.replace("htop", "tmux"))
    assert run_cli(args).returncode == 0
    assert "tmux" in (out / "ansible/extensions/compute/10-htop.yml").read_text()
    assert _digest(repo / "ops") != before  # only the team's own edit changed its folder
    after = _digest(repo / "ops")
    # A copy edited in the output is not overwritten silently.
    copy = out / "ansible/extensions/site/z.yml"
    copy.write_text(TASK + "# edited in place\n")
    proc = run_cli(args)
    assert proc.returncode == 2 and "ansible/extensions/site/z.yml" in proc.stderr
    assert copy.read_text().endswith("# edited in place\n")
    assert _digest(repo / "ops") == after  # archform never writes into the team's folder


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: (r / "ops/ansible/compute/10-htop.yml").rename(r / "ops/ansible/x.yml"),
         "is not <hook>/<name>.yml"),
        (lambda r: (r / "ops/pulumi/__init__.py").unlink(), "has no __init__.py"),
        (lambda r: (r / "cluster.yaml").write_text(BLUEPRINT.replace("ops/ansible", "nope")),
         "'nope' is not a folder"),
        (lambda r: (r / "ops/ansible/site/link.yml").symlink_to(r / "cluster.yaml"),
         "is a symlink"),
    ],
)  # fmt: skip
def test_bad_extension_folders_are_refused_at_their_line(
    tmp_path: Path, change: object, message: str
) -> None:
    repo = _repo(tmp_path)
    change(repo)  # type: ignore[operator]
    with pytest.raises(SpecError) as err:
        load_paths([repo / "cluster.yaml"])
    [problem] = err.value.problems
    assert problem.path.startswith("extensions.") and problem.line in (7, 8)
    assert message in problem.message
    proc = run_cli(["validate", str(repo / "cluster.yaml")])
    assert proc.returncode == 2 and f"cluster.yaml:{problem.line}:" in proc.stderr
