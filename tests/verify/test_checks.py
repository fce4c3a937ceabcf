"""`archform verify` on generated trees: real ansible-playbook, ansible-lint and slurmctld."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import support
from archform.install import collections_hint
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths, load_text
from archform.spec.models.training import TrainingCluster
from archform.verify import Result
from archform.verify.checks import ansible as ansible_check
from archform.verify.checks import slurm as slurm_check
from archform.verify.checks import slurm_parsers

FIXTURES = Path(__file__).parents[1] / "render" / "ansible" / "fixtures"
TRAINING = [
    p
    for p in support.bundled_blueprints()
    if any(isinstance(d.model, TrainingCluster) for d in load_paths([p]).documents)
]


def _generate(path: Path, out: Path) -> Path:
    loaded = load_paths([path])
    docs = [d for d in loaded.documents if isinstance(d.model, TrainingCluster)]
    write_tree(out, build_files(loaded, docs))
    return out


def _need_ansible() -> None:
    support.require_tool("ansible-playbook", "ansible-lint", "ansible-inventory")
    if ansible_check.collections_path() is None:
        if support.REQUIRE_TOOLS:
            pytest.fail("collections missing: run scripts/vendor-collections.sh")
        pytest.skip("collections missing: run scripts/vendor-collections.sh")


def _need_slurm() -> None:
    support.require_tool("slurmctld", "scontrol")


def _failed(results: list[Result]) -> list[Result]:
    return [r for r in results if r.status != "passed"]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("path", TRAINING, ids=[p.stem for p in TRAINING])
def test_ansible_project_passes_syntax_check_and_strict_lint(path: Path, tmp_path: Path) -> None:
    _need_ansible()
    results = ansible_check.run_check(_generate(path, tmp_path / "out"))
    assert results and not _failed(results), _failed(results)
    assert any("ansible-lint production" in r.artifact for r in results)
    assert sum("syntax-check" in r.artifact for r in results) == 2


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("path", TRAINING, ids=[p.stem for p in TRAINING])
def test_real_slurmctld_accepts_the_generated_files(path: Path, tmp_path: Path) -> None:
    _need_slurm()
    results = slurm_check.run_check(_generate(path, tmp_path / "out"))
    assert results and not _failed(results), _failed(results)
    daemon = [r for r in results if r.artifact.endswith("(slurmctld)")]
    assert daemon and all("UP; 0 error/warning" in d.detail for d in daemon)
    assert "validated with" in daemon[0].detail
    # Issue 15: the declared release's own parser where installed, else both neighbours.
    declared = next(
        d.model.scheduler.slurm_version
        for d in load_paths([path]).documents
        if isinstance(d.model, TrainingCluster)
    )
    installed = {p.version.release for p in slurm_parsers.installed()}
    (versions,) = [r for r in results if r.artifact.endswith("(versions)")]
    if declared.release in installed:
        assert len(daemon) == 1 and "validated by its own release's parser" in versions.detail
    elif min(installed) < declared.release < max(installed):
        assert len(daemon) == 2, versions.detail
        assert "validated by the nearest older and newer parsers" in versions.detail


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("nodes", [1024, 8192])
def test_scale_blueprints_verify(nodes: int, tmp_path: Path) -> None:
    _need_slurm()
    _need_ansible()
    out = _generate(FIXTURES / f"scale-{nodes}.yaml", tmp_path / "out")
    results = slurm_check.run_check(out)
    assert not _failed(results), _failed(results)
    linted = ansible_check.run_check(out)
    assert not _failed(linted), _failed(linted)
    assert f"compute={nodes}" in _status(linted, "inventory").detail
    by_kind = {r.artifact.rsplit("(", 1)[-1]: r.detail for r in results}
    assert f"{nodes} of {nodes} nodes" in by_kind["nodes, GRES)"]
    assert f"{nodes // 32} leaf switch(es) loaded" in by_kind["topology)"]


@pytest.fixture(scope="module")
def pretrain_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generate(
        support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml",
        tmp_path_factory.mktemp("pristine") / "out",
    )


def _broken(pristine: Path, tmp_path: Path, rel: str, old: str, new: str) -> Path:
    tree = tmp_path / "broken"
    shutil.copytree(pristine, tree)
    target = tree / "ansible" / rel
    text = target.read_text()
    assert re.search(old, text), f"{old!r} not in {rel}"
    target.write_text(re.sub(old, new, text, count=1))
    return tree


def _status(results: list[Result], suffix: str) -> Result:
    return next(r for r in results if r.artifact.endswith(suffix))


@pytest.mark.integration
def test_node_missing_from_topology_is_caught(pretrain_tree: Path, tmp_path: Path) -> None:
    _need_slurm()
    tree = _broken(
        pretrain_tree,
        tmp_path,
        "roles/slurm/files/topology.conf",
        r"Nodes=llm-pretrain-gpu\[017-032\]",
        "Nodes=llm-pretrain-gpu[017-031]",
    )
    results = slurm_check.run_check(tree)
    topology = _status(results, "(topology)")
    assert topology.status == "failed" and "llm-pretrain-gpu032" in topology.detail
    assert _status(results, "(slurmctld)").status == "failed"  # "switches lack access" warning


@pytest.mark.integration
def test_gres_type_mismatch_in_gres_conf_is_caught(pretrain_tree: Path, tmp_path: Path) -> None:
    _need_slurm()
    tree = _broken(pretrain_tree, tmp_path, "roles/slurm/files/gres.conf", "Type=h100", "Type=a100")
    result = _status(slurm_check.run_check(tree), "gres.conf")
    assert result.status == "failed" and "gres.conf gpu:a100:8" in result.detail


@pytest.mark.integration
def test_gres_type_mismatch_with_the_blueprint_is_caught(
    pretrain_tree: Path, tmp_path: Path
) -> None:
    _need_slurm()
    tree = _broken(
        pretrain_tree,
        tmp_path,
        "roles/slurm/files/slurm.conf",
        "Gres=gpu:h100:8",
        "Gres=gpu:a100:8",
    )
    results = slurm_check.run_check(tree)
    assert _status(results, "(nodes, GRES)").status == "failed"
    assert _status(results, "gres.conf").status == "failed"


@pytest.mark.integration
def test_unknown_slurm_conf_key_is_caught(pretrain_tree: Path, tmp_path: Path) -> None:
    _need_slurm()
    tree = _broken(
        pretrain_tree,
        tmp_path,
        "roles/slurm/files/slurm.conf",
        "MpiDefault=pmix",
        "MpiDefault=pmix\nFooBarBaz=1",
    )
    result = _status(slurm_check.run_check(tree), "(slurmctld)")
    assert result.status == "failed" and "NOT UP" in result.detail
    assert "FooBarBaz" in result.detail


@pytest.mark.integration
def test_unknown_gres_conf_key_is_caught(pretrain_tree: Path, tmp_path: Path) -> None:
    _need_slurm()
    tree = _broken(
        pretrain_tree, tmp_path, "roles/slurm/files/gres.conf", "Name=gpu", "Bogus=1 Name=gpu"
    )
    result = _status(slurm_check.run_check(tree), "(slurmctld)")
    assert result.status == "failed" and "Bogus" in result.detail


@pytest.mark.integration
@pytest.mark.slow
def test_bad_module_argument_and_unknown_module_are_caught(
    pretrain_tree: Path, tmp_path: Path
) -> None:
    _need_ansible()
    tree = _broken(
        pretrain_tree,
        tmp_path,
        "roles/common/tasks/main.yml",
        r"    path: /etc/ansible/facts.d\n",
        "    pathh: /etc/ansible/facts.d\n",
    )
    lint = _status(ansible_check.run_check(tree), "(ansible-lint production)")
    assert lint.status == "failed" and "args[module]" in lint.detail
    tree2 = _broken(
        pretrain_tree,
        tmp_path / "2",
        "roles/munge/tasks/main.yml",
        "ansible.builtin.apt:",
        "ansible.builtin.aptt:",
    )
    syntax = _status(ansible_check.run_check(tree2), "site.yml (syntax-check)")
    assert syntax.status == "failed" and "aptt" in syntax.detail


def test_missing_tools_are_skipped_not_passed(
    pretrain_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archform.verify.checks import slurm_parsers

    monkeypatch.setattr(slurm_parsers, "installed", lambda: [])  # no slurmctld anywhere
    monkeypatch.setattr(ansible_check, "missing_tools", lambda *tools: list(tools))
    slurm_results = slurm_check.run_check(pretrain_tree)
    ansible_results = ansible_check.run_check(pretrain_tree)
    results = slurm_results + ansible_results
    assert results and {r.status for r in results} == {"skipped"}
    assert all("no slurmctld/scontrol found" in r.detail for r in slurm_results)
    assert all("missing" in r.detail for r in ansible_results)


def test_missing_collections_are_skipped(
    pretrain_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ansible_check, "missing_tools", lambda *tools: [])
    monkeypatch.setattr(ansible_check, "collections_path", lambda: None)
    results = ansible_check.run_check(pretrain_tree)
    assert [r.status for r in results] == ["skipped"]
    # the install-aware hint: `./dev install ansible` in a clone, ansible-galaxy elsewhere
    # (archform.install.collections_hint)
    assert f"(hint: {collections_hint()})" in results[0].detail, results[0].detail
    assert "install ansible" in results[0].detail or "ansible-galaxy" in results[0].detail


@pytest.mark.integration
@pytest.mark.slow
def test_verify_cli_reports_per_artifact(pretrain_tree: Path) -> None:
    _need_slurm()
    # about the ansible and slurm results: another check may skip locally (verify_skips)
    args = ["verify", str(pretrain_tree), "--format", "json", *support.verify_skips()]
    proc = support.run_cli(args, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"check": "slurm"' in proc.stdout and '"check": "ansible"' in proc.stdout


def _variant(tmp_path: Path, stem: str, **changes: object) -> Path:
    """Generate a bundled blueprint with fields replaced (nested dicts merged one level)."""
    import json

    doc = next(
        d
        for d in load_paths([support.BLUEPRINTS / f"{stem}.yaml"]).documents
        if isinstance(d.model, TrainingCluster)
    )
    data = doc.model.model_dump(mode="json", exclude_none=True)
    for key, value in changes.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    loaded = load_text(json.dumps(data), "variant.yaml")
    out = tmp_path / "variant"
    write_tree(out, build_files(loaded))
    return out


def _only_the_slurmctld_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validate with the distribution's slurmctld alone (not the /opt builds)."""
    on_path = [p for p in slurm_parsers.installed() if p.prefix == Path("/usr")]
    monkeypatch.setattr(slurm_parsers, "installed", lambda: on_path)


@pytest.mark.integration
def test_newer_version_is_validated_in_the_installed_versions_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need_slurm()
    _only_the_slurmctld_on_path(monkeypatch)
    full, version = slurm_check.installed_version()
    if version >= (23, 11):
        support.missing(
            f"a slurmctld before 23.11 (installed: {full}, which knows topology/default)"
        )
    tree = _variant(tmp_path, "onprem-cpu-smoke", scheduler={"version": "25.05"})
    conf = (tree / "ansible/roles/slurm/files/slurm.conf").read_text()
    assert "TopologyPlugin=topology/flat" in conf  # what the cluster gets
    daemon = _status(slurm_check.run_check(tree), "(slurmctld)")
    assert daemon.status == "passed", daemon.detail
    assert "rendered for Slurm 25.05" in daemon.detail
    assert "TopologyPlugin=topology/flat -> TopologyPlugin=topology/none" in daemon.detail


@pytest.mark.integration
def test_block_topology_is_validated_as_its_tree_form_on_old_slurm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need_slurm()
    _only_the_slurmctld_on_path(monkeypatch)
    full, version = slurm_check.installed_version()
    if version >= (23, 11):
        support.missing(f"a slurmctld before 23.11 (installed: {full}, which has topology/block)")
    tree = _variant(
        tmp_path,
        "aws-p5-efa-fsx",
        compute={"nodes": 72},
        fabric={"topology": {"kind": "block", "block_size": 18}},
    )
    assert "BlockSizes=18,36,72" in (tree / "ansible/roles/slurm/files/topology.conf").read_text()
    results = slurm_check.run_check(tree)
    assert not _failed(results), _failed(results)
    assert "topology.conf (whole file)" in _status(results, "(slurmctld)").detail
    assert "4 leaf switch(es) loaded, blueprint has 4" in _status(results, "(topology)").detail


@pytest.mark.integration
def test_elastic_cloud_nodes_are_all_listed(tmp_path: Path) -> None:
    _need_slurm()
    tree = _variant(tmp_path, "aws-p5-efa-fsx", scheduler={"elastic": True})
    assert "State=CLOUD" in (tree / "ansible/roles/slurm/files/slurm.conf").read_text()
    results = slurm_check.run_check(tree)
    assert not _failed(results), _failed(results)
    assert "16 of 16 nodes" in _status(results, "(nodes, GRES)").detail
