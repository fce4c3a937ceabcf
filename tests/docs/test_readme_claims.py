"""What the README promises a new user, checked against the files it describes.

- The pre-commit snippet pins `rev:` to a release tag (v + a version CHANGELOG.md lists) and
  names only hooks .pre-commit-hooks.yaml publishes.
- The day-1 section's "proven here / only the target can prove" table has a row for every
  bundled training tree and says, for every tree, that a cgroup v2 slurmd is not proven on the
  cgroup v1 CI host.
"""

from __future__ import annotations

import re

import yaml

from archform.spec import load_paths
from support import BLUEPRINTS, ROOT

README = (ROOT / "README.md").read_text("utf-8")


def _section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n### ", start + len(title))
    return README[start : end if end != -1 else len(README)]


def test_pre_commit_snippet_pins_a_release_tag_and_published_hooks() -> None:
    block = re.search(r"```yaml\n(.*?)```", _section("### pre-commit"), re.S)
    assert block, "README's pre-commit section has no yaml snippet"
    (repo,) = yaml.safe_load(block.group(1))["repos"]
    rev = str(repo["rev"])
    assert re.fullmatch(r"v\d+\.\d+\.\d+", rev), rev
    changelog = (ROOT / "CHANGELOG.md").read_text("utf-8")
    versions = re.findall(r"^## (\d+\.\d+\.\d+)\b", changelog, re.M)
    assert rev.removeprefix("v") in versions, (rev, versions)
    published = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    named = {h["id"] for h in repo["hooks"]}
    assert named and named <= published, (named, published)


def test_day1_table_covers_every_training_tree_and_states_the_cgroup_limit() -> None:
    section = _section("#### What is proven here, and what only the target can prove")
    rows = {
        m.group(1): m.group(0)
        for m in re.finditer(r"^\| `?([a-z0-9-]+|every tree)`? \|.*$", section, re.M)
    }
    training = sorted(
        p.stem
        for p in BLUEPRINTS.glob("*.yaml")
        for d in load_paths([p]).documents
        if d.model.kind == "TrainingCluster" and d.model.compute.total_gpus > 0
    )
    assert training, "no bundled GPU training blueprint found"
    missing = [stem for stem in training if stem not in rows]
    assert not missing, f"README day-1 table has no row for {missing}"
    every = rows.get("every tree", "")
    assert "cgroup v2" in every and "cgroup" in section and "cgroup v1" in section, every


def test_install_section_gives_the_commands_the_fresh_clone_test_runs() -> None:
    """The Install section's first command is the one tests/distribution/test_fresh_clone.py
    runs on a fresh clone (`pipx install .`), and the extras it names exist in pyproject."""
    install = README[README.index("## Install") : README.index("## Usage")]
    block = re.search(r"```sh\n(.*?)```", install, re.S)
    assert block, "README's Install section has no sh block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    assert commands[0] == "pipx install .", commands
    fresh = (ROOT / "tests" / "distribution" / "test_fresh_clone.py").read_text("utf-8")
    assert '["pipx", "install", str(repo)]' in fresh
    extras = set(re.findall(r"'\.\[([a-z,]+)\]'", install))
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    declared = set(re.findall(r"^([a-z]+) = \[", pyproject, re.M))
    named = {e for group in extras for e in group.split(",")}
    assert named and named <= declared, (named, declared)
